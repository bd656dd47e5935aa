package mux

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/execlab/executor/relay/arq"
	"github.com/execlab/executor/relay/frame"
)

// Packet is one stream payload: a Noise handshake message or a transport record with its
// seq. It mirrors noise/channel.Packet (the relay may not import noise; a three-line adapter
// converts).
type Packet struct {
	Handshake bool
	Seq       uint32
	Payload   []byte
}

type streamState uint8

const (
	statePending   streamState = iota // message 1 received, Handler validating
	stateResponded                    // message 2 enqueued, Established not yet called
	stateActive                       // Established
	stateEnded
)

// Stream is one relay stream. Its methods are safe for concurrent use; ReadPacket and
// WritePacket are each meant for one goroutine at a time. After the stream ends every call
// fails with the cause (ErrStreamReset, ErrStreamClosed or ErrConnClosed).
type Stream struct {
	m      *Mux
	id     string
	ctx    context.Context
	cancel context.CancelFunc
	notify chan struct{} // capacity 1; signalled when inbox grows or the stream ends
	// traceparent is the opening handshake frame's cleartext field 11 ("" if none).
	traceparent string
	// arqOffered: the opening handshake frame carried frame.FeatureARQ (set before the
	// Handler starts, read-only after).
	arqOffered bool
	// arq is the stream's ARQ state once message 2 accepted ARQ (arq.go); nil otherwise.
	arq atomic.Pointer[arq.Endpoint]
	// arqT drives arq's timers (arq.go); set with arq, under m.mu and s.mu.
	arqT *arq.Timers

	// mu guards the fields below (taken after Mux.mu when both are needed).
	mu         sync.Mutex
	state      streamState
	inbox      []Packet // FIFO of received packets, bounded by the Mux's inbound limits
	inboxBytes int
	endErr     error
	noCharge   bool // the failure is not the harness's (stream limit at Established)
}

// ID returns the stream id (the harness's choice; part of the Noise prologue).
func (s *Stream) ID() string { return s.id }

// Context is cancelled when the stream ends.
func (s *Stream) Context() context.Context { return s.ctx }

// ReadPacket returns the next inbound packet: first the handshake message 1, then records in
// arrival order (the channel above reorders). It blocks until a packet arrives, the stream
// ends or ctx is done. The payload belongs to the caller.
func (s *Stream) ReadPacket(ctx context.Context) (Packet, error) {
	for {
		s.mu.Lock()
		if len(s.inbox) > 0 {
			p := s.inbox[0]
			s.inbox[0] = Packet{}
			s.inbox = s.inbox[1:]
			s.inboxBytes -= len(p.Payload)
			if len(s.inbox) == 0 {
				s.inbox = nil // drop the backing array while idle
			}
			s.mu.Unlock()
			return p, nil
		}
		if s.state == stateEnded {
			err := s.endErr
			s.mu.Unlock()
			return Packet{}, err
		}
		s.mu.Unlock()
		select {
		case <-s.notify:
		case <-ctx.Done():
			return Packet{}, ctx.Err()
		}
	}
}

// WritePacket sends p on the stream. The first handshake packet is message 2: it is enqueued
// without blocking and moves the stream from pending to responded; it fails with
// ErrStreamClosed if the stream is no longer pending (a stale validation result), and with
// ErrQueueFull — after closing the physical connection — when the queue is full. Records
// (Handshake false) block while the outbound queue is full, until ctx is done or the stream
// ends. A record's p.Payload is owned by the Mux from the call on, error or not (a record
// of capacity recbuf.Cap goes back to that pool once sent, or acknowledged on an ARQ
// stream); a handshake packet's once WritePacket returns nil.
func (s *Stream) WritePacket(ctx context.Context, p Packet) error {
	m := s.m
	if p.Handshake {
		m.mu.Lock()
		defer m.mu.Unlock()
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.state != statePending {
			return s.stateErrLocked()
		}
		of := outFrame{streamID: s.id, kind: frame.KindHandshake, payload: p.Payload}
		if s.arqOffered && !m.opts.DisableARQ && !m.closed {
			of.features = frame.FeatureARQ
		}
		select {
		case m.out <- of:
			s.state = stateResponded
			if of.features&frame.FeatureARQ != 0 {
				m.startARQLocked(s)
			}
			return nil
		default:
			m.log.Warn("closing Noise relay socket: outbound queue full for handshake response")
			_ = m.fc.Close()
			return ErrQueueFull
		}
	}
	s.mu.Lock()
	if s.state != stateResponded && s.state != stateActive {
		err := s.stateErrLocked()
		s.mu.Unlock()
		return err
	}
	s.mu.Unlock()
	e := s.arq.Load()
	if e != nil {
		m.refs.add(p.Payload, 2) // retained by the Endpoint + queued (recrefs.go)
		if err := e.Send(ctx, s.ctx.Done(), p.Seq, p.Payload); err != nil {
			m.refs.release(p.Payload, 2)
			if ctx.Err() == nil && s.ctx.Err() == nil {
				s.end() // protocol error (records out of seq order)
			}
			if s.ctx.Err() != nil {
				return s.err()
			}
			return err
		}
	} else {
		m.refs.add(p.Payload, 1) // queued
	}
	err := s.enqueue(ctx, outFrame{streamID: s.id, kind: frame.KindData, seq: p.Seq, payload: p.Payload, arq: e})
	if err != nil {
		m.refs.release(p.Payload, 1)
	}
	return err
}

// Established marks the handshake complete: the stream counts as active from now on and
// its end is no longer a charged handshake failure. It fails with ErrStreamLimit when
// MaxStreams streams are already active (the caller should end the stream; that is not
// charged), and with the stream's error when it has ended.
func (s *Stream) Established() error {
	m := s.m
	m.mu.Lock()
	defer m.mu.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	switch s.state {
	case stateActive:
		return nil
	case statePending, stateResponded:
	default:
		return s.stateErrLocked()
	}
	if m.active >= m.opts.MaxStreams {
		s.noCharge = true
		return ErrStreamLimit
	}
	s.state = stateActive
	m.pending--
	m.active++
	return nil
}

// Close ends the stream from this side: a reset is sent unless the peer reset it or the
// socket is gone; a stream that never reached Established is charged as a handshake failure.
// It is idempotent and always returns nil. The Handler returning has the same effect.
func (s *Stream) Close() error {
	s.end()
	return nil
}

func (s *Stream) end() {
	m := s.m
	m.mu.Lock()
	s.mu.Lock()
	st, noCharge := s.state, s.noCharge
	s.mu.Unlock()
	if st == stateEnded || !m.removeLocked(s, ErrStreamClosed) {
		m.mu.Unlock()
		return
	}
	if (st == statePending || st == stateResponded) && !noCharge {
		m.chargeLocked(time.Now())
	}
	m.mu.Unlock()
	m.sendReset(s.id)
}

func (s *Stream) err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stateErrLocked()
}

func (s *Stream) stateErrLocked() error {
	if s.endErr != nil {
		return s.endErr
	}
	return ErrStreamClosed
}

// wake signals a blocked ReadPacket without blocking.
func (s *Stream) wake() {
	select {
	case s.notify <- struct{}{}:
	default:
	}
}

// Traceparent returns the cleartext W3C traceparent (relay frame field 11) of the frame that
// opened the stream, "" when it had none. It is untrusted input: a tracer parses it.
func (s *Stream) Traceparent() string { return s.traceparent }

// ARQ reports whether the stream uses ARQ v1 (both handshake frames carried
// frame.FeatureARQ). It is false until message 2 is written.
func (s *Stream) ARQ() bool { return s.arq.Load() != nil }
