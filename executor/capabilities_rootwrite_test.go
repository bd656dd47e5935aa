package executor

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/execlab/executor/sandbox"
)

// The root-write flags (spec capabilities-0.171.0.md §2, §11) are advertised with the
// bubblewrap backend only, after shellSnapshotV2 in the reference's key order, and
// omitted (not false) otherwise.
func TestCapabilities_RootWriteFlags(t *testing.T) {
	const devices, restrictions = `"linuxRootWritePreservesDevices":true`, `"linuxApprovedRootWritePreservesRestrictions":true`
	for _, tt := range []struct {
		backend string
		want    bool
	}{
		{sandbox.BackendBubblewrap, true},
		{sandbox.BackendLandlock, false},
		{sandbox.BackendNone, false},
	} {
		b, err := json.Marshal(capabilities(sandbox.NewLauncher(sandbox.Report{Backend: tt.backend}, nil), ""))
		if err != nil {
			t.Fatal(err)
		}
		s := string(b)
		if !tt.want {
			if strings.Contains(s, "linuxRootWrite") || strings.Contains(s, "linuxApprovedRootWrite") {
				t.Errorf("backend %s: capabilities %s, want no root-write flags", tt.backend, s)
			}
			continue
		}
		snap, d, r := strings.Index(s, `"shellSnapshotV2"`), strings.Index(s, devices), strings.Index(s, restrictions)
		if snap < 0 || d < 0 || r < 0 || !(snap < d && d < r) {
			t.Errorf("backend %s: capabilities %s, want shellSnapshotV2, then %s, then %s", tt.backend, s, devices, restrictions)
		}
	}
	if s, _ := json.Marshal(capabilities(nil, "")); strings.Contains(string(s), "linuxRootWrite") {
		t.Errorf("no launcher: capabilities %s, want no root-write flags", s)
	}
}
