package process

import (
	"reflect"
	"testing"

	"github.com/execlab/executor/executor/protocol"
)

// Environment precedence of a snapshotted start (spec/capabilities-0.171.0.md §3.2,
// PROBED): prepared env, then the snapshot's exports (through envPolicy with inherit
// forced to all), then the request env; the always-removed variables go last.
func TestSnapshotEnvPrecedence(t *testing.T) {
	prepared := map[string]string{"PATH": "/usr/bin:/bin", "KEEP": "fromreq", "BASE": "prepared", "HOME": "/h"}
	exports := map[string]string{"PATH": "/rcpath:/usr/bin:/bin", "KEEP": "fromrc", "NEWVAR": "fromrc", "BASE": "fromrc",
		"NEWOTHER": "fromrc", "API_KEY": "k", "CODEX_EXEC_SERVER_EXIT_ON_STDIN_CLOSE": "1"}
	reqEnv := map[string]string{"PATH": "/usr/bin:/bin", "KEEP": "fromreq", "HOME": "/h"}

	got := snapshotEnv(prepared, exports, reqEnv, nil)
	want := map[string]string{"PATH": "/usr/bin:/bin", "KEEP": "fromreq", "BASE": "fromrc", "HOME": "/h",
		"NEWVAR": "fromrc", "NEWOTHER": "fromrc", "API_KEY": "k"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("no policy:\n got %v\nwant %v", got, want)
	}

	policy := &protocol.ExecEnvPolicy{Inherit: protocol.EnvInheritNone, Exclude: []string{"NEWV*"},
		Set: map[string]string{"NEWOTHER": "fromset"}}
	got = snapshotEnv(prepared, exports, reqEnv, policy)
	want = map[string]string{"PATH": "/usr/bin:/bin", "KEEP": "fromreq", "BASE": "fromrc", "HOME": "/h",
		"NEWOTHER": "fromset"} // NEWV* excluded; *KEY* is a default exclude
	if !reflect.DeepEqual(got, want) {
		t.Errorf("with policy:\n got %v\nwant %v", got, want)
	}
}

func TestLimitedBuffer(t *testing.T) {
	b := limitedBuffer{max: 4}
	if n, err := b.Write([]byte("abc")); n != 3 || err != nil {
		t.Fatal(n, err)
	}
	if _, err := b.Write([]byte("de")); err != errCaptureTooBig {
		t.Fatalf("over budget: %v", err)
	}
	if b.buf.String() != "abc" {
		t.Fatalf("kept %q", b.buf.String())
	}
}
