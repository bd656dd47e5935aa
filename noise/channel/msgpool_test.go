package channel_test

import (
	"bytes"
	"testing"

	"github.com/execlab/executor/noise/channel"
)

// TestReleaseMessage_ReusedIntact: a spanning message released with ReleaseMessage is
// scribbled over (as a careless reuse would) and its storage may then hold the next
// spanning message; every message read arrives intact, and a message held (not
// released) is never overwritten by later ones.
func TestReleaseMessage_ReusedIntact(t *testing.T) {
	peer, conn := newRawInitiator(t)
	ctx := testCtx(t)
	sizes := []int{300 << 10, 300 << 10, 200 << 10, 61440, 350 << 10, 100}
	var held []byte
	var heldWant []byte
	for i, n := range sizes {
		msg := pattern(n, byte(i+1))
		fb := framed(msg)
		for off := 0; off < len(fb); off += channel.RecordPlaintextLen {
			peer.deliver(peer.seal(fb[off:min(off+channel.RecordPlaintextLen, len(fb))]))
		}
		got, err := conn.ReadMessage(ctx)
		if err != nil || !bytes.Equal(got, msg) {
			t.Fatalf("message %d (%d bytes): got %d bytes, %v; want it intact", i, n, len(got), err)
		}
		if i == 2 {
			held, heldWant = got, bytes.Clone(msg)
			continue
		}
		for j := range got {
			got[j] = 0xee
		}
		channel.ReleaseMessage(got)
	}
	if !bytes.Equal(held, heldWant) {
		t.Fatal("a message that was not released was overwritten by later ones")
	}
	channel.ReleaseMessage(nil) // no-op
}

// TestReleaseMessage_SpanBufferSized: a spanning message's buffer has room for the whole
// message in one class (no regrowth), and no more than initialSpanCap.
func TestReleaseMessage_SpanBufferSized(t *testing.T) {
	peer, conn := newRawInitiator(t)
	ctx := testCtx(t)
	for _, n := range []int{70 << 10, 256 << 10, 350 << 10, 480 << 10} {
		msg := pattern(n, 5)
		fb := framed(msg)
		for off := 0; off < len(fb); off += channel.RecordPlaintextLen {
			peer.deliver(peer.seal(fb[off:min(off+channel.RecordPlaintextLen, len(fb))]))
		}
		got, err := conn.ReadMessage(ctx)
		if err != nil || !bytes.Equal(got, msg) {
			t.Fatalf("%d bytes: got %d, %v", n, len(got), err)
		}
		if c := cap(got); c%channel.RecordPlaintextLen != 0 || c < n || c-n >= channel.RecordPlaintextLen {
			t.Fatalf("%d bytes: buffer cap %d, want the smallest multiple of %d that holds it", n, c, channel.RecordPlaintextLen)
		}
		channel.ReleaseMessage(got)
	}
}
