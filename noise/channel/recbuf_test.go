package channel_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/execlab/executor/internal/recbuf"
	"github.com/execlab/executor/noise/channel"
)

// sinkConn is a RecordConn that, once sinking, takes every record as relay/mux does on a
// released stream: the payload goes back to recbuf right after it was "sent".
type sinkConn struct {
	*pipeEnd
	sink atomic.Bool
	n    atomic.Int64 // records sunk
}

func (s *sinkConn) WritePacket(ctx context.Context, pk channel.Packet) error {
	if s.sink.Load() && !pk.Handshake {
		if cap(pk.Payload) != recbuf.Cap {
			return context.Canceled // not sealed into a pooled buffer
		}
		s.n.Add(1)
		recbuf.Put(pk.Payload)
		return nil
	}
	return s.pipeEnd.WritePacket(ctx, pk)
}

// sinkWriter returns a responder Conn whose records are sunk (sinkConn) after the handshake.
func sinkWriter(tb testing.TB) (*channel.Conn, *sinkConn) {
	respID, initID := mustIdentity(tb), mustIdentity(tb)
	a, z := newPipe(1024)
	sc := &sinkConn{pipeEnd: z}
	ctx := testCtx(tb)
	res := make(chan connResult, 1)
	go func() {
		c, err := channel.Responder(ctx, sc, &channel.ResponderConfig{Static: respID, Authorize: allowAll})
		res <- connResult{c, err}
	}()
	ic, err := channel.Initiator(ctx, a, &channel.InitiatorConfig{Static: initID, ResponderStatic: respID.Public()})
	if err != nil {
		tb.Fatal(err)
	}
	r := <-res
	if r.err != nil {
		tb.Fatal(r.err)
	}
	tb.Cleanup(func() { ic.Close(); r.conn.Close() })
	sc.sink.Store(true)
	return r.conn, sc
}

// TestWriteMessage_SealsIntoPool: every record is sealed into a pooled buffer (capacity
// recbuf.Cap), so a RecordConn that returns them makes the record send path allocate no
// ciphertext: a full record costs at most the few small allocations of the call itself
// (the context), not a 61,456-byte buffer. Allocation counts, not timings.
func TestWriteMessage_SealsIntoPool(t *testing.T) {
	w, sc := sinkWriter(t)
	ctx := context.Background()
	msg := pattern(channel.RecordPlaintextLen-channel.LengthPrefixLen, 3) // exactly one full record
	if err := w.WriteMessage(ctx, msg); err != nil {
		t.Fatal(err)
	}
	allocs := testing.AllocsPerRun(50, func() {
		if err := w.WriteMessage(ctx, msg); err != nil {
			t.Fatal(err)
		}
	})
	if sc.n.Load() != 52 { // one before, one warm-up run, 50 counted
		t.Fatalf("%d records sunk, want 52", sc.n.Load())
	}
	if allocs > 3 {
		t.Fatalf("%.1f allocations per one-record message, want ≤ 3 (no per-record ciphertext buffer)", allocs)
	}
	t.Logf("%.1f allocations per one-record message", allocs)
}

// BenchmarkConn_WriteRecord measures WriteMessage of one full record into a RecordConn that
// returns each record to the pool (as relay/mux does once it is sent): sealing only.
func BenchmarkConn_WriteRecord(b *testing.B) {
	w, _ := sinkWriter(b)
	ctx := context.Background()
	msg := pattern(channel.RecordPlaintextLen-channel.LengthPrefixLen, 3)
	b.SetBytes(int64(len(msg)))
	b.ReportAllocs()
	for b.Loop() {
		if err := w.WriteMessage(ctx, msg); err != nil {
			b.Fatal(err)
		}
	}
}
