package harness

import (
	"testing"

	"github.com/execlab/executor/executor/protocol"
)

// TestRetrySafeDerived pins the retry-safe set derived from executor/protocol to the
// literal map the harness kept before it was derived: the derivation changes nothing.
func TestRetrySafeDerived(t *testing.T) {
	want := map[string]bool{
		"process/write":              true,
		"process/read":               true,
		"process/terminate":          true,
		"process/resizePty":          true,
		"process/exitStatus":         true,
		"environment/info":           true,
		"environment/status":         true,
		"fs/readFile":                true,
		"fs/getMetadata":             true,
		"fs/readDirectory":           true,
		"fs/canonicalize":            true,
		"fs/walk":                    true,
		"capabilityRoots/discoverV1": true,
		"capabilities/discoverV2":    true,
		"environmentConfig/read":     true,
	}
	got := map[string]bool{}
	for _, m := range protocol.RequestMethods() {
		if retrySafe(m) {
			got[m] = true
		}
	}
	for m := range want {
		if !got[m] {
			t.Errorf("%s: retry-safe before, not now", m)
		}
	}
	for m := range got {
		if !want[m] {
			t.Errorf("%s: retry-safe now, not before", m)
		}
	}
	if retrySafe(protocol.MethodInitialize) || retrySafe("no/such") {
		t.Error("initialize or an unknown method is retry-safe")
	}
}
