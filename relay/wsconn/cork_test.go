package wsconn

import (
	"bytes"
	"context"
	"net"
	"sync"
	"testing"
	"time"
)

// countConn records each Write to it.
type countConn struct {
	net.Conn
	mu     sync.Mutex
	writes [][]byte
}

func (c *countConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.writes = append(c.writes, bytes.Clone(p))
	return len(p), nil
}

func (c *countConn) SetWriteDeadline(time.Time) error { return nil }

// TestCorkConn_BatchesHeldWrites: writes while held go out as one write at release, in
// order; writes while not held pass straight through; a batch that would pass corkLimit
// is written out first.
func TestCorkConn_BatchesHeldWrites(t *testing.T) {
	under := &countConn{}
	c := &corkConn{Conn: under}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()

	if _, err := c.Write([]byte("direct")); err != nil {
		t.Fatal(err)
	}
	c.hold()
	var want []byte
	for i := range 15 {
		chunk := bytes.Repeat([]byte{byte('a' + i)}, 4096)
		want = append(want, chunk...)
		if n, err := c.Write(chunk); err != nil || n != len(chunk) {
			t.Fatalf("held write %d: got (%d, %v)", i, n, err)
		}
	}
	if got := len(under.writes); got != 1 {
		t.Fatalf("got %d writes before release, want 1 (the direct one)", got)
	}
	if err := c.release(ctx); err != nil {
		t.Fatal(err)
	}
	if len(under.writes) != 2 || !bytes.Equal(under.writes[1], want) {
		t.Fatalf("got %d writes (last %d bytes), want the 15 chunks as one %d-byte write", len(under.writes), len(under.writes[len(under.writes)-1]), len(want))
	}

	// Overflow: a batch never exceeds corkLimit; order is kept.
	under.writes = nil
	c.hold()
	big := bytes.Repeat([]byte{'x'}, corkLimit-10)
	_, _ = c.Write(big)
	_, _ = c.Write(bytes.Repeat([]byte{'y'}, 100))
	_, _ = c.Write([]byte("z"))
	if err := c.release(ctx); err != nil {
		t.Fatal(err)
	}
	var all []byte
	for _, w := range under.writes {
		if len(w) > corkLimit {
			t.Errorf("got a %d-byte write, want at most corkLimit %d", len(w), corkLimit)
		}
		all = append(all, w...)
	}
	if wantAll := string(big) + string(bytes.Repeat([]byte{'y'}, 100)) + "z"; string(all) != wantAll {
		t.Errorf("bytes reordered or lost across the overflow: got %d bytes", len(all))
	}
	if err := c.release(ctx); err != nil { // not held: no-op
		t.Fatal(err)
	}
}
