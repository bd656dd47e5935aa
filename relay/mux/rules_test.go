package mux_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
	"testing/synctest"
	"time"

	"github.com/execlab/executor/relay/frame"
	"github.com/execlab/executor/relay/mux"
)

// blockingValidator holds each validation until released (or its ctx ends).
type blockingValidator struct {
	release chan error
}

func (b *blockingValidator) validate(ctx context.Context, _ string, _ []byte) error {
	select {
	case err := <-b.release:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

func TestMux_EchoAndSeq(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, nil, nil)
		e.send(frame.Frame{StreamID: "s-1", Body: &frame.Resume{}}) // ignored
		e.open("s-1")
		for i := range uint32(3) {
			e.data("s-1", i, fmt.Sprint("rec", i))
			e.expectData("s-1", i, fmt.Sprint("rec", i))
		}
		if got, want := e.stats(), (mux.Stats{Active: 1}); got != want {
			t.Errorf("stats: got %+v, want %+v", got, want)
		}
	})
}

func TestMux_DropsTextGarbageInvalid_KeepsServing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, nil, nil)
		e.open("s-1")
		if err := e.peer.SendText(context.Background(), "hello"); err != nil {
			t.Fatal(err)
		}
		if err := e.peer.WriteFrame(context.Background(), []byte{0xff, 0xff, 0xff}); err != nil {
			t.Fatal(err)
		}
		bad := []frame.Frame{
			{Version: 2, StreamID: "s-1", Body: &frame.Ack{}},
			{StreamID: " ", Body: &frame.Ack{}},
			{StreamID: "s-1", Body: &frame.Data{SegmentCount: 0, Payload: []byte("x")}},
			{StreamID: "s-1", Body: &frame.Data{SegmentCount: 1}},
			{StreamID: "s-1", Body: &frame.Reset{}},
			{StreamID: "s-1", Body: &frame.Handshake{}},
			{StreamID: "s-1"},
		}
		for _, f := range bad {
			v := f.Version
			e.send(f)
			_ = v
		}
		e.send(frame.Frame{StreamID: "s-1", Body: &frame.Heartbeat{}})
		e.send(frame.Frame{StreamID: "s-1", Body: &frame.Ack{}})
		e.expectNone()
		e.data("s-1", 0, "still here")
		e.expectData("s-1", 0, "still here")
		e.open("s-2")
		if got := e.stats().Failures; got != 0 {
			t.Errorf("charged failures: got %d, want 0", got)
		}
	})
}

func TestMux_UnknownStreamDataResets_NotCharged(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, nil, nil)
		for i := range 9 { // 9 in a row do not trigger the cooldown (observed)
			e.data("nobody", uint32(i), "x")
			e.expectReset("nobody")
		}
		if got := e.stats(); got.Failures != 0 || got.CoolingDown {
			t.Errorf("stats: got %+v, want no failures and no cooldown", got)
		}
		e.open("s-1")
	})
}

func TestMux_EarlyDataResetsAndCharges(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		v := &blockingValidator{release: make(chan error)}
		e := newEnv(t, &testHandler{validate: v.validate}, nil)
		e.handshake("s-1", "m1")
		synctest.Wait()
		e.data("s-1", 0, "too early")
		e.expectReset("s-1")
		if got := e.stats(); got.Failures != 1 || got.Pending != 0 {
			t.Errorf("stats: got %+v, want 1 failure, 0 pending", got)
		}
		e.expectNone() // the cancelled validation sends nothing more
	})
}

func TestMux_DuplicateHandshakeActive_StreamKeepsRunning(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, nil, nil)
		e.open("s-1")
		e.handshake("s-1", "again")
		e.expectReset("s-1")
		e.data("s-1", 0, "alive")
		e.expectData("s-1", 0, "alive")
		if got := e.stats(); got.Failures != 0 || got.Active != 1 {
			t.Errorf("stats: got %+v, want 1 active, no failures", got)
		}
	})
}

func TestMux_DuplicateHandshakePending_StaleValidationIgnored(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// The validator ignores ctx, so the first validation completes after it was
		// cancelled; its message 2 must be discarded.
		release := make(chan struct{})
		h := &testHandler{validate: func(ctx context.Context, id string, msg1 []byte) error {
			<-release
			return nil
		}}
		e := newEnv(t, h, nil)
		e.handshake("s-1", "first")
		synctest.Wait()
		e.handshake("s-1", "second")
		e.expectReset("s-1")
		close(release)
		e.expectNone()
		h.mu.Lock()
		err := h.results["s-1"]
		h.mu.Unlock()
		if !errors.Is(err, mux.ErrStreamClosed) {
			t.Errorf("late message 2 write: got %v, want ErrStreamClosed", err)
		}
		if got := e.stats(); got.Failures != 1 || got.Pending != 0 || got.Active != 0 {
			t.Errorf("stats: got %+v, want 1 failure and nothing pending/active", got)
		}
		// The id can be used again.
		e.open("s-1")
	})
}

func TestMux_ResetPendingSilently_ResetActiveNoReply(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		v := &blockingValidator{release: make(chan error)}
		e := newEnv(t, &testHandler{validate: v.validate}, nil)
		e.handshake("p", "m1")
		synctest.Wait()
		e.reset("p")
		e.expectNone()
		if got := e.stats(); got.Failures != 0 || got.Pending != 0 {
			t.Errorf("after pending reset: got %+v, want nothing pending, no failures", got)
		}

		go func() { v.release <- nil }()
		e.open("a")
		e.reset("a")
		e.expectNone()
		if got := e.stats(); got.Active != 0 {
			t.Errorf("after active reset: got %+v, want 0 active", got)
		}
	})
}

func TestMux_HandlerExitResets_IdReuse(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, nil, nil)
		e.open("s-1")
		e.data("s-1", 0, "quit")
		e.expectReset("s-1")
		if got := e.stats(); got.Active != 0 || got.Failures != 0 {
			t.Errorf("after handler exit: got %+v, want 0 active, no failures", got)
		}
		e.open("s-1") // reuse after a close from our side
		e.data("s-1", 0, "one")
		e.expectData("s-1", 0, "one")
		e.reset("s-1")
		e.open("s-1") // reuse after a close from the peer
		e.data("s-1", 0, "two")
		e.expectData("s-1", 0, "two")
	})
}

func TestMux_FailureBudgetAndCooldown(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := &testHandler{validate: func(context.Context, string, []byte) error {
			return errors.New("registry said no")
		}}
		e := newEnv(t, h, nil)
		for i := range mux.FailureBudget {
			id := fmt.Sprint("f", i)
			e.handshake(id, "m1")
			e.expectReset(id)
		}
		if got := e.stats(); !got.CoolingDown {
			t.Fatalf("after %d failures: got %+v, want cooling down", mux.FailureBudget, got)
		}
		calls := h.validations()
		e.handshake("during", "m1")
		e.expectReset("during")
		if got := h.validations(); got != calls {
			t.Errorf("validations during cooldown: got %d, want %d (no registry call)", got, calls)
		}
		time.Sleep(mux.Cooldown - time.Second)
		e.handshake("still", "m1")
		e.expectReset("still")
		if got := h.validations(); got != calls {
			t.Errorf("validations 9 s into the cooldown: got %d, want %d", got, calls)
		}
		time.Sleep(time.Second)
		// The counter restarted: one failure does not pause again.
		e.handshake("after", "m1")
		e.expectReset("after")
		if got := h.validations(); got != calls+1 {
			t.Errorf("validations after the cooldown: got %d, want %d", got, calls+1)
		}
		if got := e.stats(); got.CoolingDown || got.Failures != 1 {
			t.Errorf("stats after one new failure: got %+v, want 1 failure, not cooling", got)
		}
		h.validate = nil
		e.open("ok")
	})
}

func TestMux_Capacity_NotCharged(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		v := &blockingValidator{release: make(chan error)}
		h := &testHandler{validate: v.validate}
		e := newEnv(t, h, &mux.Options{MaxStreams: 4, MaxPending: 2})
		// Fill pending.
		e.handshake("p0", "m1")
		e.handshake("p1", "m1")
		e.handshake("p2", "m1")
		e.expectReset("p2")
		for range 2 {
			v.release <- nil
			synctest.Wait()
		}
		got := map[string]bool{}
		for range 2 {
			f := e.recv()
			if _, ok := f.Body.(*frame.Handshake); ok {
				got[f.StreamID] = true
			}
		}
		if !got["p0"] || !got["p1"] {
			t.Fatalf("message 2 frames for %v, want p0 and p1", got)
		}
		for i := 2; i < 4; i++ {
			id := fmt.Sprint("p", i+1)
			e.handshake(id, "m1")
			v.release <- nil
			e.expectHandshake(id)
		}
		if got := e.stats(); got.Active != 4 {
			t.Fatalf("stats: got %+v, want 4 active", got)
		}
		e.handshake("fifth", "m1")
		e.expectReset("fifth")
		if got := e.stats(); got.Failures != 0 {
			t.Errorf("capacity resets charged: got %+v, want 0 failures", got)
		}
	})
}

func TestMux_QueueFullOnMessage2ClosesSocket(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// A one-frame outbound queue and a peer that reads nothing: the writer blocks on the
		// pipe (capacity 1024) only after 1024 frames, so stall it with a tiny pipe instead.
		release := make(chan struct{})
		h := &testHandler{validate: func(ctx context.Context, id string, _ []byte) error {
			<-release
			return nil
		}}
		e := newEnvCap(t, h, &mux.Options{OutboundQueue: 1}, 1)
		for _, id := range []string{"a", "b", "c", "d", "e"} {
			e.handshake(id, "m1")
		}
		synctest.Wait()
		close(release) // five message-2 writes race for a 1-slot queue behind a 1-slot pipe
		synctest.Wait()
		select {
		case <-e.peer.Done():
		default:
			t.Fatal("socket still open after message 2 found the outbound queue full")
		}
	})
}

// TestMux_ManyHandshakesRandomIDs is the bad-input flood: 10,000 handshakes on random stream
// ids with garbage message 1 (the handler fails them at once), interleaved with data for
// unknown ids. The mux keeps serving an established stream and stays within its bounds.
func TestMux_ManyHandshakesRandomIDs(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		seed := rand.Uint64()
		t.Logf("seed %d", seed)
		r := rand.New(rand.NewPCG(seed, 0))
		h := &testHandler{validate: func(_ context.Context, id string, _ []byte) error {
			if id == "keep" {
				return nil
			}
			return errors.New("bad message 1")
		}}
		e := newEnv(t, h, nil)
		e.open("keep")
		drain := make(chan int)
		go func() {
			n := 0
			for {
				ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
				_, err := e.peer.ReadFrame(ctx)
				cancel()
				if err != nil {
					drain <- n
					return
				}
				n++
			}
		}()
		for range 10000 {
			id := fmt.Sprintf("%016x", r.Uint64())
			if r.IntN(4) == 0 {
				e.data(id, 0, "x")
			} else {
				e.handshake(id, "garbage")
			}
			synctest.Wait()
		}
		if got := e.stats(); got.Active != 1 || got.Pending != 0 {
			t.Errorf("stats after flood: got %+v, want 1 active, 0 pending", got)
		}
		e.peer.Close()
		<-drain
	})
}
