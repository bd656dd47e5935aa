package mux

import (
	"context"
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
//	timers          arq.Timers, the driver both relay sides share: no goroutine while
//	                idle; a drive goroutine, owned by the Mux like the Handlers, runs only
//	                while a resend or an ack_frame is due, and a time.AfterFunc timer is
//	                armed only while a deadline is pending
//	protocol error  an ack of an unsent seq or a record beyond the window ends the stream
//	                with a reset
//
// A stream whose harness did not offer the bit (every released harness) never sees any of
// this: its frames are byte for byte the released executor's.

// startARQLocked enables ARQ on s (message 2 is being enqueued). Called with m.mu and s.mu
// held, m not closed. It starts no goroutine: the stream's timers are arq.Timers, whose
// drive goroutines the Mux owns (counted in m.handlers, like the Handlers).
func (m *Mux) startARQLocked(s *Stream) *arq.Endpoint {
	e := arq.NewEndpoint()
	e.SetHold(func(payload []byte) { m.refs.add(payload, 1) }) // a queued resend
	s.arqT = arq.NewTimers(e, arq.TimersConfig{
		Send:    func(resends []arq.Resend, ack bool) error { return s.sendDue(e, resends, ack) },
		Release: func(payload []byte) { m.refs.release(payload, 1) },
		Group:   &m.handlers,
	})
	s.arq.Store(e)
	return e
}

// sendDue enqueues the resends, then the standalone ack_frame if due (arq.Timers' Send).
func (s *Stream) sendDue(e *arq.Endpoint, resends []arq.Resend, ack bool) error {
	m := s.m
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
