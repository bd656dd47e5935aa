package mux_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/execlab/executor/internal/recbuf"
	"github.com/execlab/executor/relay/frame"
	"github.com/execlab/executor/relay/mux"
	"github.com/execlab/executor/relay/relaytest"
)

// env is one Mux under test: the test plays rendezvous/harness on peer.
type env struct {
	t      *testing.T
	peer   *relaytest.Conn
	mux    *mux.Mux
	h      *testHandler
	cancel context.CancelFunc
	runErr chan error
}

// testHandler runs each stream: validate (nil = accept) then message 2, Established, and an
// echo of every record (payload "quit" ends the stream from the executor side).
type testHandler struct {
	validate func(ctx context.Context, id string, msg1 []byte) error
	// pooled: each echo is a copy sealed into a recbuf buffer, as noise/channel's records are.
	pooled bool

	mu      sync.Mutex // guards calls and ends
	calls   []string   // stream ids whose validation started
	results map[string]error
}

func (h *testHandler) serve(ctx context.Context, s *mux.Stream) {
	p, err := s.ReadPacket(ctx)
	if err != nil || !p.Handshake {
		return
	}
	h.mu.Lock()
	h.calls = append(h.calls, s.ID())
	h.mu.Unlock()
	if h.validate != nil {
		if err := h.validate(ctx, s.ID(), p.Payload); err != nil {
			return
		}
	}
	err = s.WritePacket(ctx, mux.Packet{Handshake: true, Payload: []byte("msg2:" + string(p.Payload))})
	h.record(s.ID(), err)
	if err != nil {
		return
	}
	if err := s.Established(); err != nil {
		return
	}
	var seq uint32
	for {
		p, err := s.ReadPacket(ctx)
		if err != nil || string(p.Payload) == "quit" {
			return
		}
		out := p.Payload
		if h.pooled {
			out = append(recbuf.Get(), p.Payload...)
		}
		if err := s.WritePacket(ctx, mux.Packet{Seq: seq, Payload: out}); err != nil {
			return
		}
		seq++
	}
}

func (h *testHandler) record(id string, err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.results == nil {
		h.results = map[string]error{}
	}
	h.results[id] = err
}

func (h *testHandler) validations() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.calls)
}

func newEnv(t *testing.T, h *testHandler, opts *mux.Options) *env {
	return newEnvConn(t, h, opts, false)
}

// newEnvConn is newEnv whose Mux writes through splitConn (mux.SplitFrameWriter) when split.
func newEnvConn(t *testing.T, h *testHandler, opts *mux.Options, split bool) *env {
	a, b := relaytest.Pipe(0)
	if h == nil {
		h = &testHandler{}
	}
	var fc mux.FrameConn = a
	if split {
		fc = splitConn{a}
	}
	return runEnv(t, fc, b, h, opts)
}

// runEnv runs a Mux on fc whose peer is peer, stopped and waited for at cleanup.
func runEnv(t *testing.T, fc mux.FrameConn, peer *relaytest.Conn, h *testHandler, opts *mux.Options) *env {
	m := mux.New(fc, h.serve, opts)
	ctx, cancel := context.WithCancel(context.Background())
	e := &env{t: t, peer: peer, mux: m, h: h, cancel: cancel, runErr: make(chan error, 1)}
	go func() { e.runErr <- m.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		<-e.runErr
	})
	return e
}

func (e *env) send(f frame.Frame) {
	e.t.Helper()
	f.Version = frame.Version
	b, err := frame.EncodeUnvalidated(nil, &f)
	if err != nil {
		e.t.Fatalf("encoding test frame: %v", err)
	}
	if err := e.peer.WriteFrame(context.Background(), b); err != nil {
		e.t.Fatalf("sending test frame: %v", err)
	}
}

func (e *env) handshake(id, msg1 string) {
	e.send(frame.Frame{StreamID: id, Body: &frame.Handshake{Payload: []byte(msg1)}})
}

func (e *env) data(id string, seq uint32, payload string) {
	e.send(frame.Frame{StreamID: id, Body: &frame.Data{Seq: seq, SegmentCount: 1, Payload: []byte(payload)}})
}

func (e *env) reset(id string) {
	e.send(frame.Frame{StreamID: id, Body: &frame.Reset{Reason: "peer says bye"}})
}

// recv returns the next frame the executor sent (inside a synctest bubble the wait is
// instantaneous unless the executor is idle, which fails the test).
func (e *env) recv() frame.Frame {
	e.t.Helper()
	synctest.Wait()
	ctx, cancel := context.WithTimeout(context.Background(), time.Nanosecond)
	defer cancel()
	b, err := e.peer.ReadFrame(ctx)
	if err != nil {
		e.t.Fatalf("waiting for a frame from the executor: %v", err)
	}
	var f frame.Frame
	if err := frame.Decode(&f, b); err != nil {
		e.t.Fatalf("executor sent an undecodable frame: %v", err)
	}
	if err := f.Validate(); err != nil {
		e.t.Fatalf("executor sent an invalid frame: %v", err)
	}
	return f
}

// expectNone checks that the executor sent nothing more.
func (e *env) expectNone() {
	e.t.Helper()
	synctest.Wait()
	ctx, cancel := context.WithTimeout(context.Background(), time.Nanosecond)
	defer cancel()
	if b, err := e.peer.ReadFrame(ctx); err == nil {
		var f frame.Frame
		_ = frame.Decode(&f, b)
		e.t.Fatalf("executor sent an unexpected %s frame for %q", frame.KindOf(f.Body), f.StreamID)
	} else if !errors.Is(err, context.DeadlineExceeded) {
		e.t.Fatalf("reading from executor: %v", err)
	}
}

func (e *env) expectReset(id string) {
	e.t.Helper()
	f := e.recv()
	r, ok := f.Body.(*frame.Reset)
	if !ok || f.StreamID != id {
		e.t.Fatalf("got %s frame for %q, want reset for %q", frame.KindOf(f.Body), f.StreamID, id)
	}
	if r.Reason != mux.ResetReason {
		e.t.Errorf("reset reason: got %q, want %q", r.Reason, mux.ResetReason)
	}
}

func (e *env) expectHandshake(id string) {
	e.t.Helper()
	f := e.recv()
	if _, ok := f.Body.(*frame.Handshake); !ok || f.StreamID != id {
		e.t.Fatalf("got %s frame for %q, want handshake for %q", frame.KindOf(f.Body), f.StreamID, id)
	}
}

func (e *env) expectData(id string, seq uint32, payload string) {
	e.t.Helper()
	f := e.recv()
	d, ok := f.Body.(*frame.Data)
	if !ok || f.StreamID != id {
		e.t.Fatalf("got %s frame for %q, want data for %q", frame.KindOf(f.Body), f.StreamID, id)
	}
	if d.Seq != seq || string(d.Payload) != payload || d.SegmentCount != 1 || f.Ack != 0 || f.AckBits != 0 {
		e.t.Fatalf("data: got seq %d payload %q count %d ack %d/%d, want seq %d payload %q count 1 ack 0/0",
			d.Seq, d.Payload, d.SegmentCount, f.Ack, f.AckBits, seq, payload)
	}
}

// open runs a full accepted handshake for id and checks the echo works.
func (e *env) open(id string) {
	e.t.Helper()
	e.handshake(id, "m1")
	e.expectHandshake(id)
}

func (e *env) stats() mux.Stats {
	synctest.Wait()
	return e.mux.Stats()
}

func newEnvCap(t *testing.T, h *testHandler, opts *mux.Options, capacity int) *env {
	a, b := relaytest.Pipe(capacity)
	return runEnv(t, a, b, h, opts)
}

// splitConn is a FrameConn that takes frames as head and tail (mux.SplitFrameWriter), as
// relay/wsconn does, reading the tail only during the call: with recbuf poisoning, a record
// returned to the pool before its write ends arrives poisoned.
type splitConn struct{ *relaytest.Conn }

func (c splitConn) WriteFrameSplit(ctx context.Context, head, tail []byte) error {
	return c.WriteFrame(ctx, append(append(make([]byte, 0, len(head)+len(tail)), head...), tail...))
}
