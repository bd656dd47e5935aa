package mux_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/execlab/executor/internal/recbuf"
	"github.com/execlab/executor/relay/arq"
	"github.com/execlab/executor/relay/frame"
	"github.com/execlab/executor/relay/mux"
	"github.com/execlab/executor/relay/relaytest"
)

// TestARQ_NotOfferedIsReleased: a harness that does not offer ARQ (every released one) gets
// an unmarked message 2, its ack fields and ack_frames are ignored, and the executor's data
// frames carry ack 0 and ack_bits 0 and are never resent.
func TestARQ_NotOfferedIsReleased(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, nil, nil)
		e.handshake("s-1", "m1")
		if f := e.recv(); f.Features != 0 || frame.KindOf(f.Body) != frame.KindHandshake {
			t.Fatalf("message 2: features %d, kind %s; want 0, handshake", f.Features, frame.KindOf(f.Body))
		}
		e.send(frame.Frame{StreamID: "s-1", Ack: 9, AckBits: 0xff, Body: &frame.Data{Seq: 0, SegmentCount: 1, Payload: []byte("a")}})
		e.send(frame.Frame{StreamID: "s-1", Ack: 70, AckBits: 1, Body: &frame.Ack{}})
		f := e.recv()
		if f.Ack != 0 || f.AckBits != 0 || frame.KindOf(f.Body) != frame.KindData {
			t.Fatalf("echo: %+v, want a data frame with ack 0 and ack_bits 0", f)
		}
		time.Sleep(10 * arq.MaxRTO)
		e.expectNone() // nothing resent, no ack_frame
	})
}

// TestARQ_DisabledRefuses: with Options.DisableARQ an offering harness gets an unmarked
// message 2 and released behaviour.
func TestARQ_DisabledRefuses(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, nil, &mux.Options{DisableARQ: true})
		e.send(frame.Frame{StreamID: "s-1", Features: frame.FeatureARQ, Body: &frame.Handshake{Payload: []byte("m1")}})
		if f := e.recv(); f.Features != 0 {
			t.Fatalf("message 2 features %d, want 0", f.Features)
		}
		e.data("s-1", 0, "a")
		if f := e.recv(); f.Ack != 0 {
			t.Fatalf("echo carries ack %d, want 0", f.Ack)
		}
	})
}

// TestARQ_AcceptedAndResends: an offering harness gets message 2 marked; the executor's
// data frames carry the cumulative ack; an unacknowledged record is resent byte for byte
// after the initial RTO; a standalone ack_frame follows in-order data within AckDelay; an
// ack of a seq never sent resets the stream.
func TestARQ_AcceptedAndResends(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, nil, nil)
		e.send(frame.Frame{StreamID: "s-1", Features: frame.FeatureARQ, Body: &frame.Handshake{Payload: []byte("m1")}})
		if f := e.recv(); f.Features != frame.FeatureARQ {
			t.Fatalf("message 2 features %d, want FeatureARQ", f.Features)
		}
		e.data("s-1", 0, "hello")
		echo := e.recv()
		d, ok := echo.Body.(*frame.Data)
		if !ok || string(d.Payload) != "hello" || echo.Ack != 1 {
			t.Fatalf("echo: %+v %+v, want data \"hello\" with ack 1", echo, echo.Body)
		}
		e.expectNone()
		time.Sleep(arq.InitialRTO)
		again := e.recv()
		if d2, ok := again.Body.(*frame.Data); !ok || d2.Seq != d.Seq || string(d2.Payload) != "hello" {
			t.Fatalf("after the RTO: %+v, want the same record again", again.Body)
		}
		e.send(frame.Frame{StreamID: "s-1", Ack: 1, Body: &frame.Ack{}})
		time.Sleep(10 * arq.MaxRTO)
		e.expectNone() // acknowledged: never resent again

		// The echo of "x" carries the ack of "x"; acknowledged, nothing more is sent.
		e.data("s-1", 1, "x")
		if f := e.recv(); frame.KindOf(f.Body) != frame.KindData || f.Ack != 2 {
			t.Fatalf("echo of x: %+v", f)
		}
		e.send(frame.Frame{StreamID: "s-1", Ack: 2, Body: &frame.Ack{}})
		e.expectNone()

		// Out of order: seq 3 before 2 makes an ack due at once, with bit 0 set.
		e.data("s-1", 3, "z")
		if f := e.recv(); frame.KindOf(f.Body) != frame.KindAck || f.Ack != 2 || f.AckBits != 1 {
			t.Fatalf("after a gap: %+v %s, want ack_frame ack 2 bits 1", f, frame.KindOf(f.Body))
		}
		e.send(frame.Frame{StreamID: "s-1", Ack: 40, Body: &frame.Ack{}})
		e.expectReset("s-1")
	})
}

// lossyPeer is a test harness speaking ARQ v1 over a relaytest pipe, dropping and
// duplicating its own outbound data frames and the executor's inbound ones at random.
type lossyPeer struct {
	conn *relaytest.Conn
	id   string
	e    *arq.Endpoint

	mu  sync.Mutex // guards rng and writes
	rng *rand.Rand

	got chan []byte // records released in order
}

func (p *lossyPeer) lose() (drop, dup bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	v := p.rng.IntN(100)
	return v < 10, v >= 95
}

func (p *lossyPeer) write(ctx context.Context, body frame.Body) error {
	if _, ok := body.(*frame.Data); ok {
		drop, dup := p.lose()
		if drop {
			return nil
		}
		if dup {
			if err := p.write1(ctx, body); err != nil {
				return err
			}
		}
	}
	return p.write1(ctx, body)
}

func (p *lossyPeer) write1(ctx context.Context, body frame.Body) error {
	f := frame.Frame{Version: frame.Version, StreamID: p.id, Body: body}
	f.Ack, f.AckBits = p.e.TakeAck()
	b, err := frame.Encode(nil, &f)
	if err != nil {
		return err
	}
	return p.conn.WriteFrame(ctx, b)
}

func (p *lossyPeer) read(ctx context.Context) error {
	var ready [][]byte
	for {
		b, err := p.conn.ReadFrame(ctx)
		if err != nil {
			return err
		}
		var f frame.Frame
		if err := frame.Decode(&f, b); err != nil {
			return err
		}
		switch body := f.Body.(type) {
		case *frame.Data:
			if drop, _ := p.lose(); drop {
				continue
			}
			if err := p.e.OnAck(f.Ack, f.AckBits); err != nil {
				return err
			}
			ready, _, err = p.e.Receive(ready[:0], body.Seq, body.Payload)
			if err != nil {
				return err
			}
			for _, r := range ready {
				p.got <- r
			}
		case *frame.Ack:
			if err := p.e.OnAck(f.Ack, f.AckBits); err != nil {
				return err
			}
		case *frame.Reset:
			return errors.New("stream reset")
		}
	}
}

// TestARQ_LossyPipe: through a pipe that drops 10 % and duplicates 5 % of the data frames
// in each direction, 400 records of up to 40 KiB reach the executor's Handler in order and
// its echoes come back in order, within bounded virtual time.
func TestARQ_LossyPipe(t *testing.T) { lossyPipe(t, false, false) }

// TestARQ_LossyPipePooled: the same with the executor's echoes in pooled record buffers
// (recbuf, as noise/channel seals them) and every buffer poisoned as it returns to the
// pool: a buffer reused while its first send, a queued resend or the ARQ window can still
// read it would corrupt an echo. At the end every buffer's references are gone.
func TestARQ_LossyPipePooled(t *testing.T) {
	recbuf.SetPoison(true)
	defer recbuf.SetPoison(false)
	lossyPipe(t, true, false)
}

// TestARQ_LossyPipePooledSplit is TestARQ_LossyPipePooled through a FrameConn that takes each
// record as the frame's tail (the write path of relay/wsconn), which reads the record after
// the frame's head is encoded: the queued reference must last until the write returns.
func TestARQ_LossyPipePooledSplit(t *testing.T) {
	recbuf.SetPoison(true)
	defer recbuf.SetPoison(false)
	lossyPipe(t, true, true)
}

func lossyPipe(t *testing.T, pooled, split bool) {
	const n = 400
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	synctest.Test(t, func(t *testing.T) {
		e := newEnvConn(t, &testHandler{pooled: pooled}, nil, split)
		p := &lossyPeer{conn: e.peer, id: "s-1", e: arq.NewEndpoint(), rng: rand.New(rand.NewPCG(seed, 1)), got: make(chan []byte, n)}
		e.send(frame.Frame{StreamID: "s-1", Features: frame.FeatureARQ, Body: &frame.Handshake{Payload: []byte("m1")}})
		if f := e.recv(); f.Features != frame.FeatureARQ {
			t.Fatalf("message 2 features %d", f.Features)
		}
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		tm := arq.NewTimers(p.e, arq.TimersConfig{Group: &wg, Send: func(rs []arq.Resend, ack bool) error {
			for _, r := range rs {
				if err := p.write(ctx, &frame.Data{Seq: r.Seq, SegmentCount: 1, Payload: r.Payload}); err != nil {
					return err
				}
			}
			if ack {
				return p.write(ctx, &frame.Ack{})
			}
			return nil
		}})
		defer func() { cancel(); tm.Stop(); wg.Wait() }()
		wg.Add(1)
		go func() { defer wg.Done(); _ = p.read(ctx) }()
		payload := func(i int) []byte {
			return fmt.Appendf(make([]byte, 0, 64), "record %d %0*d", i, i*97%(40<<10), 0)
		}
		start := time.Now()
		go func() {
			for i := range n {
				pl := payload(i)
				if p.e.Send(ctx, nil, uint32(i), pl) != nil {
					return
				}
				if p.write(ctx, &frame.Data{Seq: uint32(i), SegmentCount: 1, Payload: pl}) != nil {
					return
				}
			}
		}()
		for i := range n {
			select {
			case r := <-p.got:
				if want := payload(i); string(r) != string(want) {
					t.Fatalf("echo %d: got %.30q, want %.30q", i, r, want)
				}
			case <-time.After(time.Minute):
				t.Fatalf("echo %d not back within a virtual minute", i)
			}
		}
		t.Logf("%d records each way in %v of virtual time", n, time.Since(start))
		if pooled {
			e.send(frame.Frame{StreamID: "s-1", Body: &frame.Reset{Reason: "done"}})
			for deadline := time.Now().Add(time.Minute); mux.PooledRefs(e.mux) != 0; {
				if time.Now().After(deadline) {
					t.Fatalf("%d pooled records still referenced a virtual minute after the stream ended", mux.PooledRefs(e.mux))
				}
				time.Sleep(10 * time.Millisecond)
			}
		}
	})
}

// TestReleasedStreamPooled: on a stream without ARQ (every released harness) an echo in a
// pooled record buffer goes back to the pool as soon as its frame is encoded; with every
// returned buffer poisoned, 64 echoes of distinct content (in batches of 4 queued at once)
// still arrive intact and in seq order, and no reference is left.
func TestReleasedStreamPooled(t *testing.T) {
	for _, split := range []bool{false, true} {
		t.Run(fmt.Sprintf("split=%v", split), func(t *testing.T) { releasedStreamPooled(t, split) })
	}
}

func releasedStreamPooled(t *testing.T, split bool) {
	recbuf.SetPoison(true)
	defer recbuf.SetPoison(false)
	synctest.Test(t, func(t *testing.T) {
		e := newEnvConn(t, &testHandler{pooled: true}, nil, split)
		e.handshake("s-1", "m1")
		e.expectHandshake("s-1")
		payload := func(i int) string { return fmt.Sprintf("record %d %0*d", i, i*331%(40<<10), 0) }
		for i := 0; i < 64; i += 4 {
			for j := i; j < i+4; j++ {
				e.data("s-1", uint32(j), payload(j))
			}
			for j := i; j < i+4; j++ {
				e.expectData("s-1", uint32(j), payload(j))
			}
		}
		synctest.Wait()
		if n := mux.PooledRefs(e.mux); n != 0 {
			t.Fatalf("%d pooled records still referenced", n)
		}
	})
}

// TestARQ_IdleStreamsNoTimerGoroutine: an idle ARQ stream (everything acknowledged, no ack
// pending) holds no goroutine besides its Handler: its timers run only while something is
// due (the idle_stream_memory bench row's regression guard, counted, not timed).
func TestARQ_IdleStreamsNoTimerGoroutine(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, nil, nil)
		exchange := func(id string) {
			e.send(frame.Frame{StreamID: id, Features: frame.FeatureARQ, Body: &frame.Handshake{Payload: []byte("m1")}})
			if f := e.recv(); f.Features != frame.FeatureARQ {
				t.Fatalf("%s: message 2 features %d, want FeatureARQ", id, f.Features)
			}
			e.data(id, 0, "hi")
			if f := e.recv(); frame.KindOf(f.Body) != frame.KindData || f.Ack != 1 {
				t.Fatalf("%s: echo %+v, want data with ack 1", id, f)
			}
			e.send(frame.Frame{StreamID: id, Ack: 1, Body: &frame.Ack{}})
		}
		idle := func() int {
			time.Sleep(10 * arq.MaxRTO)
			synctest.Wait()
			e.expectNone()
			return runtime.NumGoroutine()
		}
		exchange("s-0")
		before := idle()
		const n = 20
		for i := range n {
			exchange(fmt.Sprintf("s-%d", i+1))
		}
		// runtime.NumGoroutine counts the whole process: goroutines of earlier tests may still
		// be exiting, so the bound has a margin; a goroutine per stream would add 2n.
		if after := idle(); after-before > n+n/4 {
			t.Fatalf("%d idle ARQ streams added %d goroutines, want about %d (their Handlers only)", n, after-before, n)
		}
		if st := e.stats(); st.Active != n+1 {
			t.Fatalf("active streams %d, want %d", st.Active, n+1)
		}
	})
}
