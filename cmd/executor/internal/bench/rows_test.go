package bench

import (
	"encoding/base64"
	"os"
	"testing"
	"time"

	"github.com/execlab/executor/harness"
)

// TestRows_NamesUnique: the table is one ordered list; names are the JSON keys, so each
// appears once and every row has a unit, a goal and a Measure.
func TestRows_NamesUnique(t *testing.T) {
	seen := map[string]bool{}
	for _, r := range Rows() {
		if seen[r.Name] {
			t.Errorf("row %s listed twice", r.Name)
		}
		seen[r.Name] = true
		if r.Unit == "" || r.Goal.Kind == 0 || r.Measure == nil || r.Describe == "" {
			t.Errorf("row %s: got unit %q goal %v measure %v describe %q, want all set", r.Name, r.Unit, r.Goal, r.Measure != nil, r.Describe)
		}
	}
}

// TestZeroBase64Len: the no-decode check of stdout_parallel accepts exactly the encodings
// of zero bytes and counts them as the decoder would.
func TestZeroBase64Len(t *testing.T) {
	for _, n := range []int{1, 2, 3, 4, 5, 6, 100, 64 << 10, 64<<10 + 1, 256 << 10} {
		enc := []byte(base64.StdEncoding.EncodeToString(make([]byte, n)))
		if got, ok := zeroBase64Len(enc); !ok || got != n {
			t.Errorf("%d zero bytes: got (%d, %v), want (%d, true)", n, got, ok, n)
		}
		one := make([]byte, n)
		one[n-1] = 1
		if _, ok := zeroBase64Len([]byte(base64.StdEncoding.EncodeToString(one))); ok {
			t.Errorf("%d bytes ending in 1: accepted as zeros", n)
		}
	}
	for _, bad := range []string{"", "A", "AA", "AAA", "AAAAA", "AA=A", "A===", "AAB=", "AE=="} {
		if got, ok := zeroBase64Len([]byte(bad)); ok {
			t.Errorf("%q: got (%d, true), want rejected", bad, got)
		}
	}
}

func TestZeroOutputSink(t *testing.T) {
	var got int64
	sink := zeroOutputSink(&got)
	n := harness.Notification{Method: "process/output", Params: []byte(`{"processId":"p","seq":7,"stream":"stdout","chunk":"AAAA"}`)}
	if seq, err := sink(n); err != nil || seq != 7 || got != 3 {
		t.Errorf("got seq %d err %v bytes %d, want 7, nil, 3", seq, err, got)
	}
	for _, p := range []string{
		`{"processId":"p","seq":8,"stream":"stderr","chunk":"AAAA"}`,
		`{"processId":"p","seq":8,"stream":"stdout","chunk":"AAAB"}`,
		`{"processId":"p","seq":8,"stream":"stdout"}`,
		`{"processId":"p","stream":"stdout","chunk":"AAAA"}`,
	} {
		if _, err := sink(harness.Notification{Method: "process/output", Params: []byte(p)}); err == nil {
			t.Errorf("%s: accepted", p)
		}
	}
}

// TestProcCPU_Self: utime + stime of this process is read and grows with work.
func TestProcCPU_Self(t *testing.T) {
	before, err := procCPU(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	// Burn in short rounds and read after each one (a round is about a millisecond
	// unraced, tens under -race), so the last read comes after the last burn.
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); {
		for i := 0; i < 1e4; i++ { // burn CPU
			_ = base64.StdEncoding.EncodeToString(zeroA()[:64])
		}
		after, err := procCPU(os.Getpid())
		if err != nil {
			t.Fatal(err)
		}
		if after > before {
			return
		}
	}
	t.Error("CPU time did not grow in 10 s of busy work")
}
