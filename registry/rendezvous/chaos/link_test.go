package chaos

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/execlab/executor/relay/frame"
	"github.com/execlab/executor/relay/relaytest"
)

// linkPair runs a link between two in-memory pipes: the test holds the client's far end
// (peer) and the upstream's far end (rdv). The judge uses plan under a lock.
func linkPair(t *testing.T, side Side, plan *Plan) (peer, rdv *relaytest.Conn, stop func()) {
	t.Helper()
	peer, client := relaytest.Pipe(LineFrames)
	upstream, rdv := relaytest.Pipe(LineFrames)
	var mu sync.Mutex
	j := func(s Side, data bool, n int) Verdict {
		mu.Lock()
		defer mu.Unlock()
		plan.Relayed(n)
		plan.Advance(time.Now())
		return plan.Frame(s, data, time.Now())
	}
	l := newLink(side, client, upstream, j)
	done := make(chan struct{})
	go func() { defer close(done); l.run(context.Background()) }()
	return peer, rdv, func() { l.close(); <-done }
}

func dataFrame(t *testing.T, seq uint32) []byte {
	t.Helper()
	b, err := frame.Encode(nil, &frame.Frame{Version: frame.Version, StreamID: "s", Body: &frame.Data{Seq: seq, SegmentCount: 1, Payload: []byte{byte(seq)}}})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func seqOf(t *testing.T, b []byte) uint32 {
	t.Helper()
	var f frame.Frame
	if err := frame.Decode(&f, b); err != nil {
		t.Fatal(err)
	}
	d, ok := f.Body.(*frame.Data)
	if !ok {
		t.Fatalf("got a %s frame, want data", frame.KindOf(f.Body))
	}
	return d.Seq
}

// drain reads frames from c until none arrives for a second of (fake) time.
func drain(t *testing.T, c *relaytest.Conn) []uint32 {
	t.Helper()
	var seqs []uint32
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		b, err := c.ReadFrame(ctx)
		cancel()
		if err != nil {
			return seqs
		}
		seqs = append(seqs, seqOf(t, b))
	}
}

func TestLink_ForwardsBothWaysUnchanged(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		peer, rdv, stop := linkPair(t, SideExecutor, NewPlan(nil, time.Now(), 1))
		defer stop()
		ctx := context.Background()
		for i := range uint32(100) {
			if err := peer.WriteFrame(ctx, dataFrame(t, i)); err != nil {
				t.Fatal(err)
			}
			if err := rdv.WriteFrame(ctx, dataFrame(t, 1000+i)); err != nil {
				t.Fatal(err)
			}
		}
		up, down := drain(t, rdv), drain(t, peer)
		for i := range uint32(100) {
			if up[i] != i || down[i] != 1000+i {
				t.Fatalf("frame %d: got %d up and %d down, want %d and %d", i, up[i], down[i], i, 1000+i)
			}
		}
		if len(up) != 100 || len(down) != 100 {
			t.Fatalf("got %d up and %d down, want 100 each", len(up), len(down))
		}
	})
}

func TestLink_DropDuplicateReorder(t *testing.T) {
	const n = 2000
	tests := []struct {
		kind  Kind
		check func(t *testing.T, got []uint32)
	}{
		{KindDrop, func(t *testing.T, got []uint32) {
			if len(got) >= n || len(got) < n*85/100 {
				t.Errorf("drop=5%%: %d of %d frames arrived, want about 95%%", len(got), n)
			}
			for i := 1; i < len(got); i++ {
				if got[i] <= got[i-1] {
					t.Fatalf("drop reordered frames: %d after %d", got[i], got[i-1])
				}
			}
		}},
		{KindDuplicate, func(t *testing.T, got []uint32) {
			if len(got) <= n || len(got) > n*115/100 {
				t.Errorf("dup=5%%: %d frames arrived for %d sent, want about 105%%", len(got), n)
			}
		}},
		{KindReorder, func(t *testing.T, got []uint32) {
			if len(got) != n {
				t.Fatalf("reorder=5%%: %d frames arrived, want all %d", len(got), n)
			}
			inversions := 0
			seen := map[uint32]bool{}
			for i, s := range got {
				seen[s] = true
				if i > 0 && s < got[i-1] {
					inversions++
				}
			}
			if len(seen) != n || inversions == 0 {
				t.Errorf("reorder=5%%: %d distinct frames, %d inversions; want %d distinct and some inversions", len(seen), inversions, n)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.kind.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				plan := NewPlan([]Fault{{Kind: tt.kind, Sides: SideHarness, Rate: 0.05}}, time.Now(), 3)
				peer, rdv, stop := linkPair(t, SideHarness, plan)
				defer stop()
				var got []uint32
				done := make(chan struct{})
				go func() { defer close(done); got = drain(t, peer) }()
				for i := range uint32(n) {
					if err := rdv.WriteFrame(context.Background(), dataFrame(t, i)); err != nil {
						t.Fatal(err)
					}
					time.Sleep(time.Millisecond) // one frame per ms: reorder holds overlap later frames
				}
				<-done
				tt.check(t, got)
			})
		})
	}
}

func TestLink_DelayKeepsOrderAndAddsLatency(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		plan := NewPlan([]Fault{{Kind: KindDelay, Sides: SideBoth, Delay: 200 * time.Millisecond}}, time.Now(), 1)
		peer, rdv, stop := linkPair(t, SideExecutor, plan)
		defer stop()
		start := time.Now()
		for i := range uint32(10) {
			if err := peer.WriteFrame(context.Background(), dataFrame(t, i)); err != nil {
				t.Fatal(err)
			}
		}
		for i := range uint32(10) {
			b, err := rdv.ReadFrame(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if s := seqOf(t, b); s != i {
				t.Fatalf("frame %d arrived as %d: delay reordered", i, s)
			}
			if d := time.Since(start); d < 200*time.Millisecond {
				t.Fatalf("frame %d after %v, want at least the 200ms delay", i, d)
			}
		}
	})
}

func TestLink_EndsWhenEitherSideCloses(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		peer, rdv, stop := linkPair(t, SideExecutor, NewPlan(nil, time.Now(), 1))
		rdv.Close()
		select {
		case <-peer.Done():
		case <-time.After(time.Second):
			t.Fatal("client side still open after the upstream closed")
		}
		stop()
	})
}
