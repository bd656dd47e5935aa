//go:build !race

package jsonrpc

import "testing"

// TestEncodeNotification_AllocsPooled pins the hot path of a stdout stream: encoding a
// large hinted notification into a pooled buffer and returning it allocates nothing in
// steady state (the race detector drops pooled items at random, hence !race).
func TestEncodeNotification_AllocsPooled(t *testing.T) {
	h := &hinted{payload: make([]byte, 256<<10)}
	got := testing.AllocsPerRun(50, func() {
		b, err := encodeNotification("process/output", h)
		if err != nil {
			t.Fatal(err)
		}
		putBuffer(b)
	})
	if got > 0 {
		t.Errorf("got %v allocs per encode, want 0", got)
	}
}
