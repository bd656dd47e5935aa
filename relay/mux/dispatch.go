package mux

import (
	"context"
	"time"

	"github.com/execlab/executor/relay/frame"
)

// dispatcher applies the executor's per-frame rules (spec/relay-noise.md §12.1) to each
// inbound message. It runs on the read loop only and never blocks on a stream.
type dispatcher struct {
	m        *Mux
	f        frame.Frame // reused across messages; payloads alias the message, which we own
	ready    [][]byte    // scratch: records the ARQ receiver released
	released [][]byte    // scratch: sent records the ARQ sender no longer retains
}

func (d *dispatcher) handle(ctx context.Context, b []byte) {
	m := d.m
	if err := frame.Decode(&d.f, b); err != nil {
		m.opts.Observer.FrameDropped(DropMalformed)
		m.drops.warn(m.log, "dropping malformed Noise relay frame from harness", "error", err)
		return
	}
	if err := d.f.Validate(); err != nil {
		m.opts.Observer.FrameDropped(DropInvalid)
		m.drops.warn(m.log, "dropping invalid Noise relay frame: "+err.Error())
		return
	}
	id := d.f.StreamID
	switch body := d.f.Body.(type) {
	case *frame.Handshake:
		d.onHandshake(ctx, id, body.Payload, d.f.Traceparent, d.f.Features&frame.FeatureARQ != 0)
	case *frame.Data:
		d.onData(id, body.Seq, body.Payload)
	case *frame.Reset:
		d.onReset(id)
	case *frame.Ack:
		d.onAck(id) // ARQ streams only; ignored otherwise (observed from codex 0.169.0)
	case *frame.Resume, *frame.Heartbeat:
		// Ignored (observed from codex 0.169.0).
	default:
		m.opts.Observer.FrameDropped(DropUnknownBody)
		m.drops.warn(m.log, "dropping invalid Noise relay frame: unknown body")
	}
}

func (d *dispatcher) onHandshake(ctx context.Context, id string, msg1 []byte, traceparent string, offersARQ bool) {
	m := d.m
	now := time.Now()
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return
	}
	if s := m.streams[id]; s != nil {
		s.mu.Lock()
		st := s.state
		s.mu.Unlock()
		if st == statePending {
			// Cancel the pending validation; its late result is discarded.
			m.removeLocked(s, ErrStreamClosed)
			m.chargeLocked(now)
			m.mu.Unlock()
			m.logRefused(id, RefusedDuplicatePending)
			m.sendReset(id)
			return
		}
		m.mu.Unlock()
		// The active stream keeps running (observed).
		m.logRefused(id, RefusedDuplicateActive)
		m.sendReset(id)
		return
	}
	switch {
	case m.coolingLocked(now):
		m.mu.Unlock()
		m.logRefused(id, RefusedCooldown)
		m.sendReset(id)
		return
	case m.active >= m.opts.MaxStreams, m.pending >= m.opts.MaxPending:
		m.mu.Unlock()
		m.logRefused(id, RefusedCapacity)
		m.sendReset(id)
		return
	}
	m.startLocked(ctx, id, msg1, traceparent, offersARQ)
	m.mu.Unlock()
}

func (d *dispatcher) onData(id string, seq uint32, payload []byte) {
	m := d.m
	m.mu.Lock()
	s := m.streams[id]
	if s == nil {
		m.mu.Unlock()
		m.log.Debug("data for unknown Noise relay stream", "stream_id", id)
		m.sendReset(id)
		return
	}
	s.mu.Lock()
	switch s.state {
	case statePending:
		s.mu.Unlock()
		m.removeLocked(s, ErrStreamClosed)
		m.chargeLocked(time.Now())
		m.mu.Unlock()
		m.logRefused(id, RefusedEarlyData)
		m.sendReset(id)
		return
	case stateResponded, stateActive:
		if e := s.arq.Load(); e != nil {
			ok := d.onARQData(s, e, seq, payload)
			s.mu.Unlock()
			if !ok {
				m.removeLocked(s, ErrStreamClosed)
				m.mu.Unlock()
				m.log.Debug("ending Noise relay stream: arq protocol error", "stream_id", id)
				m.sendReset(id)
				return
			}
			m.mu.Unlock()
			s.wake()
			return
		}
		if len(s.inbox) >= m.opts.InboundQueuePackets || s.inboxBytes+len(payload) > m.opts.InboundQueueBytes {
			s.mu.Unlock()
			m.removeLocked(s, ErrStreamClosed)
			m.mu.Unlock()
			m.log.Debug("Noise relay stream inbound queue full", "stream_id", id)
			m.sendReset(id)
			return
		}
		s.inbox = append(s.inbox, Packet{Seq: seq, Payload: payload})
		s.inboxBytes += len(payload)
		s.mu.Unlock()
		m.mu.Unlock()
		s.wake()
		return
	}
	s.mu.Unlock()
	m.mu.Unlock()
}

func (d *dispatcher) onReset(id string) {
	m := d.m
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.streams[id]
	if s == nil {
		return
	}
	// Pending: dropped silently, not charged. Otherwise the stream ends; no reply.
	m.removeLocked(s, ErrStreamReset)
}

// logRefused emits the handshake diagnostic for a reset the mux decided on its own.
func (m *Mux) logRefused(id, reason string) {
	m.opts.Observer.HandshakeRefused(reason)
	m.log.Debug("resetting Noise relay stream", "noise_event", "handshake",
		"noise_outcome", "rejected", "noise_reason", reason, "stream_id", id)
}
