package mux

import (
	"context"
	"sync"
	"time"

	"github.com/execlab/executor/relay/arq"
	"github.com/execlab/executor/relay/frame"
)

// ARQ v1 on the executor side (docs/reliability.md §8). A stream uses it when the harness's
// handshake frame (message 1) offered frame.FeatureARQ and the Mux accepts it (the default;
// Options.DisableARQ): message 2's frame then carries the bit too, and from there on
//
//	outbound data   waits for room in the send window (arq.Endpoint.Send), is retained until
//	                acknowledged, carries the freshest ack/ack_bits (taken when encoded)
//	inbound data    its ack/ack_bits are applied, the record goes through the ARQ receiver,
//	                records released in order go to the inbox; a record that would overflow
//	                the inbox is dropped unacknowledged (the harness resends it) instead of
//	                resetting the stream
//	inbound ack     its ack/ack_bits are applied (ignored on non-ARQ streams, as released)
//	timers          no goroutine while idle (arqTimers): a drive goroutine, owned by the Mux
//	                like the Handlers, runs only while a resend or an ack_frame is due, and
//	                a time.AfterFunc timer is armed only while a deadline is pending
//	protocol error  an ack of an unsent seq or a record beyond the window ends the stream
//	                with a reset
//
// A stream whose harness did not offer the bit (every released harness) never sees any of
// this: its frames are byte for byte the released executor's.

// arqTimers drives one ARQ stream's timers without a goroutine of its own while idle: a
// drive goroutine (owned by the Mux, counted in m.handlers) runs only while something is
// due, and a time.AfterFunc timer is armed only while a deadline is pending (a record is
// unacknowledged or an ack is delayed). An idle stream holds neither.
type arqTimers struct {
	s *Stream
	e *arq.Endpoint

	// mu guards the fields below; taken after m.mu and s.mu, never held while calling the
	// Endpoint's driver-side methods that block or while enqueueing.
	mu      sync.Mutex
	running bool        // a drive goroutine runs
	again   bool        // woken while running: poll once more before exiting
	stopped bool        // the stream ended: no new drive goroutine, no timer
	timer   *time.Timer // AfterFunc(wake), allocated on the first deadline
}

// startARQLocked enables ARQ on s (message 2 is being enqueued). Called with m.mu and s.mu
// held, m not closed. It starts no goroutine.
func (m *Mux) startARQLocked(s *Stream) *arq.Endpoint {
	e := arq.NewEndpoint()
	e.SetHold(func(payload []byte) { m.refs.add(payload, 1) }) // a queued resend
	t := &arqTimers{s: s, e: e}
	e.SetWake(t.wake)
	s.arqT = t
	s.arq.Store(e)
	return e
}

// wake starts a drive goroutine unless one runs (it then polls again) or the stream ended.
// Called from the Endpoint (maybe with m.mu and s.mu held) and from the timer.
func (t *arqTimers) wake() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.stopped {
		return
	}
	if t.running {
		t.again = true
		return
	}
	t.running = true
	// Run waits for m.handlers only after removeLocked stopped every stream (stop, under
	// t.mu), so this Add never races its Wait.
	t.s.m.handlers.Add(1)
	go t.drive()
}

// stop ends the timers when the stream ends (removeLocked, m.mu held): the retained
// records' buffers go back now, or when the running drive goroutine exits.
func (t *arqTimers) stop() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.stopped {
		return
	}
	t.stopped = true
	if t.timer != nil {
		t.timer.Stop()
	}
	if !t.running {
		t.drainLocked()
	}
}

// drainLocked: nothing will be resent; the retained records' buffers go back once their
// queued frames (if any) are written.
func (t *arqTimers) drainLocked() {
	for _, p := range t.e.Drain(nil) {
		t.s.m.refs.release(p, 1)
	}
}

// drive sends what is due until nothing is, then arms the timer for the next deadline and
// exits. Owner: the Mux (Run waits for it through m.handlers).
func (t *arqTimers) drive() {
	defer t.s.m.handlers.Done()
	var buf []arq.Resend
	for {
		var (
			ack  bool
			next time.Time
			ok   bool
		)
		buf, ack, next, ok = t.e.Poll(buf[:0], time.Now())
		if len(buf) > 0 || ack {
			if err := t.send(buf, ack); err != nil {
				t.exit(false, time.Time{})
				return
			}
			clear(buf)
			continue // re-evaluate: sending took time
		}
		if t.exit(ok, next) {
			return
		}
	}
}

// exit ends the drive goroutine unless it was woken meanwhile (it reports false then),
// arming the timer for next when ok.
func (t *arqTimers) exit(ok bool, next time.Time) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.stopped {
		t.running = false
		t.drainLocked()
		return true
	}
	if t.again {
		t.again = false
		return false
	}
	t.running = false
	if ok {
		d := max(time.Until(next), 0)
		if t.timer == nil {
			t.timer = time.AfterFunc(d, t.wake)
		} else {
			t.timer.Reset(d)
		}
	}
	return true
}

// send enqueues the resends, then the standalone ack_frame if due.
func (t *arqTimers) send(resends []arq.Resend, ack bool) error {
	s, m, e := t.s, t.s.m, t.e
	for i, r := range resends {
		if err := s.enqueue(s.ctx, outFrame{streamID: s.id, kind: frame.KindData, seq: r.Seq, payload: r.Payload, arq: e}); err != nil {
			for _, r := range resends[i:] {
				m.refs.release(r.Payload, 1) // held by Poll, never queued
			}
			return err
		}
	}
	if ack {
		return s.enqueue(s.ctx, outFrame{streamID: s.id, kind: frame.KindAck, arq: e})
	}
	return nil
}

// enqueue puts of on the outbound queue, blocking while it is full (the wait is reported to
// the Observer as outbound back-pressure), until ctx is done or the stream or the
// connection ends.
func (s *Stream) enqueue(ctx context.Context, of outFrame) error {
	m := s.m
	select {
	case m.out <- of:
		return nil
	default: // the queue is full: wait for the writer, and report how long
	}
	waited := time.Now()
	defer func() { m.opts.Observer.Backpressure(QueueOutbound, time.Since(waited)) }()
	select {
	case m.out <- of:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-s.ctx.Done():
		return s.err()
	case <-m.done:
		return ErrConnClosed
	}
}

// onARQData handles a data frame of an ARQ stream: called by the dispatcher with m.mu and
// s.mu held. It reports false when the stream must end (protocol error).
func (d *dispatcher) onARQData(s *Stream, e *arq.Endpoint, seq uint32, payload []byte) bool {
	m := d.m
	if !d.applyAck(e) {
		return false
	}
	if len(s.inbox) >= m.opts.InboundQueuePackets || s.inboxBytes+len(payload) > m.opts.InboundQueueBytes {
		return true // not acknowledged: the harness resends it once the reader caught up
	}
	var (
		first uint32
		err   error
	)
	d.ready, first, err = e.Receive(d.ready[:0], seq, payload)
	if err != nil {
		return false
	}
	for i, r := range d.ready {
		s.inbox = append(s.inbox, Packet{Seq: first + uint32(i), Payload: r})
		s.inboxBytes += len(r)
		d.ready[i] = nil
	}
	return true
}

// onAck applies a standalone ack_frame to an ARQ stream; other streams ignore it (observed
// from codex 0.169.0: ack_frame is ignored).
func (d *dispatcher) onAck(id string) {
	m := d.m
	m.mu.Lock()
	s := m.streams[id]
	m.mu.Unlock()
	if s == nil {
		return
	}
	if e := s.arq.Load(); e != nil && !d.applyAck(e) {
		m.log.Debug("ending Noise relay stream: arq protocol error", "stream_id", id)
		m.endByID(id)
	}
}

// applyAck applies the current frame's ack and ack_bits to e and drops the Endpoint's
// references on the records it released. It reports false on a protocol error.
func (d *dispatcher) applyAck(e *arq.Endpoint) bool {
	var err error
	d.released, err = e.OnAckRelease(d.released[:0], d.f.Ack, d.f.AckBits)
	for i, p := range d.released {
		d.m.refs.release(p, 1)
		d.released[i] = nil
	}
	return err == nil
}
