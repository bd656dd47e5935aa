package rendezvous

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/execlab/executor/relay/frame"
	"github.com/execlab/executor/relay/wsconn"
)

// writeBatch is how many queued frames the writer takes per lock acquisition.
const writeBatch = 16

// Harness stream phases (socket.phase), in order; the harness's frames must follow
// spec/relay-noise.md §4.1: resume (optional), one handshake, then data only once the
// executor answered.
const (
	phaseOpen        int32 = iota // no handshake forwarded yet
	phaseHandshaking              // handshake forwarded (holding a handshake slot), no answer yet
	phaseAnswered                 // the executor sent message 2; harness data may flow
	phaseEstablished              // the executor sent data: the stream works, the slot is settled
)

// socket is one accepted relay websocket.
type socket struct {
	hub        *Hub
	env        *environment
	conn       *wsconn.Conn
	role       Role
	generation int64
	// subject is the harness URL's subject (the harness token's id); "" for executors.
	subject string
	// admitted: the socket holds an admission slot (harness sockets), released by detach.
	admitted bool
	// socketID names an executor socket recorded by Options.ExecutorAttached; "" when
	// not recorded (harness sockets, no hook).
	socketID string

	// phase is the harness stream's phase (phase* constants): the harness's read loop
	// moves it to handshaking, the executor's read loop to answered and established.
	phase atomic.Int32
	// slot is true while the harness holds an in-flight handshake slot of its subject;
	// whoever swaps it to false settles the slot (admission.endHandshake) exactly once.
	slot atomic.Bool
	// execReset is set when the executor reset this harness's stream: detach then sends
	// no reset back.
	execReset atomic.Bool

	// exec is the executor socket a harness socket is bound to (set once at attach).
	exec *socket
	// streamID is the harness socket's claimed stream id; guarded by env.mu (written once by
	// the claim, read by detach).
	streamID string

	q outQueue

	// mu guards closed, pingTimer and handshakeTimer: close races the timers.
	mu             sync.Mutex
	closed         bool
	pingTimer      *time.Timer
	handshakeTimer *time.Timer // harness sockets: closes the socket if unanswered in time
}

// close ends the socket: its queue fails pushes, the ping timer stops and the connection
// is dropped, which ends its read loop and writer. Safe from any goroutine, more than once.
func (s *socket) close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	if s.pingTimer != nil {
		s.pingTimer.Stop()
	}
	if s.handshakeTimer != nil {
		s.handshakeTimer.Stop()
	}
	s.mu.Unlock()
	s.q.close()
	_ = s.conn.Close()
}

// schedulePing arms the next Ping after PingInterval (one outstanding; Pong within
// PongTimeout; limits.go). A timer, not a goroutine, waits between pings.
func (s *socket) schedulePing() { s.schedulePingIn(s.hub.opts.Conn.PingInterval) }

func (s *socket) schedulePingIn(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	if s.pingTimer == nil {
		s.pingTimer = time.AfterFunc(d, s.ping)
	} else {
		s.pingTimer.Reset(d)
	}
}

// ping runs on the timer's goroutine: one Ping, then re-arm, or close on a missing Pong —
// unless the socket's reader was parked by back-pressure for most of the wait (it could
// not have seen the Pong): then it pings again at once.
// It counts itself in the Hub's wg only while the socket is open (the read loop, which
// holds a count until after close, makes that Add safe).
func (s *socket) ping() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.hub.wg.Add(1)
	s.mu.Unlock()
	defer s.hub.wg.Done()
	ctx, cancel := context.WithTimeout(s.hub.life, s.hub.opts.Conn.PongTimeout)
	readingBefore := s.conn.ReadingTime()
	err := s.conn.Ping(ctx)
	timedOut := errors.Is(ctx.Err(), context.DeadlineExceeded)
	cancel()
	if err != nil && timedOut && s.conn.ReaderWasParked(readingBefore, s.hub.opts.Conn.PongTimeout) {
		s.schedulePingIn(0)
		return
	}
	if err != nil {
		s.hub.log.Debug("closing rendezvous socket without pong", "environment_id", s.env.id)
		s.close()
		return
	}
	s.schedulePing()
}

// armHandshakeTimer closes a harness socket whose handshake the executor has not answered
// within HarnessHandshakeTimeout (a timer, not a goroutine; close never blocks).
func (s *socket) armHandshakeTimer() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	s.handshakeTimer = time.AfterFunc(s.hub.opts.HarnessHandshakeTimeout, func() {
		if s.phase.Load() < phaseAnswered {
			s.hub.log.Debug("closing harness socket without a handshake answer", "environment_id", s.env.id)
			s.close()
		}
	})
}

// finish closes the socket once its queue has drained (the frame just queued, typically
// the executor's reset, reaches the peer first).
func (s *socket) finish() {
	if s.q.finish() {
		s.close()
	}
}

// enqueue queues b and starts the writer when none runs. wait < 0 blocks until there is
// room; otherwise it fails with errQueueTimeout after wait.
func (s *socket) enqueue(b []byte, wait time.Duration) error {
	start, err := s.q.push(b, wait)
	if err != nil {
		return err
	}
	s.hub.framesRelayed.Add(1)
	s.hub.bytesRelayed.Add(int64(len(b)))
	if start {
		s.hub.wg.Add(1) // a pushing read loop holds a count, so this never races Wait at zero
		go s.writeLoop()
	}
	return nil
}

// writeLoop drains the queue and exits when it is empty. Owner: the Hub (wg).
func (s *socket) writeLoop() {
	defer s.hub.wg.Done()
	batch := make([][]byte, 0, writeBatch)
	for {
		var finished bool
		batch, finished = s.q.take(batch[:0], writeBatch)
		if len(batch) == 0 {
			if finished {
				s.close()
			}
			return
		}
		for i, b := range batch {
			err := s.conn.WriteFrame(s.hub.life, b)
			// Written (or failed): nobody else holds the frame, so its read buffer can
			// serve the next read (issue 16: no allocation per forwarded frame).
			batch[i] = nil
			wsconn.ReleaseFrame(b)
			if err != nil {
				s.close()
				clear(batch)
				// Mark the writer stopped so a later push (which will fail anyway) does
				// not wait for it.
				_, _ = s.q.take(batch[:0], 0)
				return
			}
		}
		clear(batch)
	}
}

// readFrame returns the next binary message, skipping text messages.
func (s *socket) readFrame() ([]byte, error) {
	for {
		b, err := s.conn.ReadFrame(s.hub.life)
		if errors.Is(err, frame.ErrNonBinary) {
			s.hub.malformed(s, "non-binary message")
			continue
		}
		return b, err
	}
}

// readValidFrame reads frames into f until one decodes and validates, and returns its
// bytes; malformed frames are counted (hub.malformed) and skipped. A read error ends the
// socket's loop.
func (s *socket) readValidFrame(f *frame.Frame) ([]byte, error) {
	for {
		b, err := s.readFrame()
		if err != nil {
			return nil, err
		}
		if frame.Decode(f, b) != nil {
			s.hub.malformed(s, "undecodable frame")
			continue
		}
		if f.Validate() != nil {
			s.hub.malformed(s, "invalid frame")
			continue
		}
		return b, nil
	}
}

// executorReadLoop routes the executor's frames to harness sockets by stream id.
func (s *socket) executorReadLoop() {
	var f frame.Frame
	for {
		b, err := s.readValidFrame(&f)
		if err != nil {
			return
		}
		s.env.mu.Lock()
		t := s.env.streams[f.StreamID]
		s.env.mu.Unlock()
		if t == nil || t.exec != s {
			s.hub.dropped.Add(1)
			continue
		}
		reset := false
		switch f.Body.(type) {
		case *frame.Handshake: // message 2
			t.phase.CompareAndSwap(phaseHandshaking, phaseAnswered)
		case *frame.Data:
			if t.phase.CompareAndSwap(phaseAnswered, phaseEstablished) {
				t.settle(false)
			}
		case *frame.Reset:
			// The stream is over (one per harness socket); before any executor data it
			// failed, and may have been charged to the executor's failure budget.
			reset = true
			t.execReset.Store(true)
			t.settle(t.phase.Load() < phaseEstablished)
		}
		if err := t.enqueue(b, s.hub.opts.SlowConsumerTimeout); err != nil {
			if errors.Is(err, errQueueTimeout) {
				s.hub.slowConsumers.Add(1)
				s.hub.log.Debug("closing slow harness socket", "environment_id", s.env.id)
				t.close()
			}
			continue
		}
		if reset {
			t.finish()
		}
	}
}

// settle releases a harness socket's in-flight handshake slot, if it holds one, recording
// a failed stream when failed. Safe from any goroutine; only the first call acts.
func (s *socket) settle(failed bool) {
	if !s.slot.CompareAndSwap(true, false) {
		return
	}
	h := s.hub
	if failed {
		h.harnessFailures.Add(1)
	}
	if h.adm.endHandshake(s.env.id, s.subject, failed, h.opts.Now()) {
		h.log.Warn("refusing a harness token after repeated failed streams",
			"environment_id", s.env.id, "token_id", s.subject, "failures", HarnessFailureBudget)
	}
}

// violation ends a harness socket that broke the frame order of spec/relay-noise.md §4.1
// (a second handshake, data before the executor's answer): the frame is not forwarded, so
// the executor never charges it, and the subject is charged one failure instead.
func (s *socket) violation(what string) {
	h := s.hub
	h.log.Debug("closing harness socket: "+what, "environment_id", s.env.id)
	if s.slot.Load() {
		s.settle(true)
		return
	}
	h.harnessFailures.Add(1)
	if h.adm.failure(s.env.id, s.subject, h.opts.Now()) {
		h.log.Warn("refusing a harness token after repeated failed streams",
			"environment_id", s.env.id, "token_id", s.subject, "failures", HarnessFailureBudget)
	}
}

// takeSlot waits for an in-flight handshake slot of the socket's subject. It returns false
// when the subject is paused or the socket or Hub ends while waiting.
func (s *socket) takeSlot() bool {
	h := s.hub
	for {
		ok, wait := h.adm.startHandshake(s.env.id, s.subject, h.opts.Now())
		if ok {
			s.slot.Store(true)
			return true
		}
		if wait == nil {
			h.refused.Add(1)
			h.log.Debug("closing harness socket of a paused token", "environment_id", s.env.id)
			return false
		}
		select {
		case <-wait:
		case <-s.conn.Done():
			return false
		case <-h.life.Done():
			return false
		}
	}
}

// harnessReadLoop forwards the harness's frames of its one stream to the bound executor
// socket. The first valid frame claims the stream id.
func (s *socket) harnessReadLoop() {
	var f frame.Frame
	claimed := ""
	for {
		b, err := s.readValidFrame(&f)
		if err != nil {
			return
		}
		if claimed == "" {
			if !s.claim(f.StreamID) {
				s.hub.claimConflicts.Add(1)
				s.hub.log.Debug("closing harness socket claiming a held stream id", "environment_id", s.env.id)
				return
			}
			claimed = s.streamID
		} else if f.StreamID != claimed || s.execReset.Load() {
			// Another stream, or anything after the executor's reset (the socket is
			// closing once that reset is delivered).
			s.hub.dropped.Add(1)
			continue
		}
		switch f.Body.(type) {
		case *frame.Handshake:
			if s.phase.Load() != phaseOpen {
				s.violation("second handshake")
				return
			}
			if !s.takeSlot() {
				return
			}
			s.phase.Store(phaseHandshaking)
		case *frame.Data:
			if s.phase.Load() < phaseAnswered {
				s.violation("data before the handshake answer")
				return
			}
		}
		if err := s.exec.enqueue(b, -1); err != nil {
			return // the executor socket ended
		}
	}
}

// claim records s as the holder of streamID, unless another open harness socket of the
// environment holds it.
func (s *socket) claim(streamID string) bool {
	e := s.env
	e.mu.Lock()
	defer e.mu.Unlock()
	if held := e.streams[streamID]; held != nil && held != s {
		return false
	}
	e.streams[streamID] = s
	s.streamID = streamID
	return true
}

// sendReset queues reset{noise_relay_protocol_error} for s's stream on exec. It blocks
// until there is room (the queue's bound), or exec ends.
func (s *socket) sendReset(exec *socket) {
	b, err := frame.Encode(nil, &frame.Frame{
		Version: frame.Version, StreamID: s.streamID, Body: &frame.Reset{Reason: ResetReason},
	})
	if err != nil {
		return // a claimed id always validates; nothing to send otherwise
	}
	if exec.enqueue(b, -1) == nil {
		s.hub.resetsSent.Add(1)
	}
}
