package rendezvous

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/coder/websocket"

	"github.com/execlab/executor/relay/frame"
	"github.com/execlab/executor/relay/mux"
	"github.com/execlab/executor/relay/wsconn"
)

// writeBatch is how many queued frames the writer takes per lock acquisition.
const writeBatch = 16

// socket is one accepted relay websocket.
type socket struct {
	hub        *Hub
	env        *environment
	conn       *wsconn.Conn
	role       Role
	generation int64

	// exec is the executor socket a harness socket is bound to (set once at attach).
	exec *socket
	// streamID is the harness socket's claimed stream id; guarded by env.mu (written once by
	// the claim, read by detach).
	streamID string

	q outQueue

	// ws is the underlying websocket, used only for Ping (conn owns reads and writes).
	ws *websocket.Conn

	// mu guards closed and pingTimer: close races the ping timer.
	mu        sync.Mutex
	closed    bool
	pingTimer *time.Timer
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
	s.mu.Unlock()
	s.q.close()
	_ = s.conn.Close()
}

// schedulePing arms the next Ping (spec/relay-noise.md §10: every 30 s, one outstanding,
// Pong within 60 s). A timer, not a goroutine, waits between pings.
func (s *socket) schedulePing() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	if s.pingTimer == nil {
		s.pingTimer = time.AfterFunc(s.hub.opts.Conn.PingInterval, s.ping)
	} else {
		s.pingTimer.Reset(s.hub.opts.Conn.PingInterval)
	}
}

// ping runs on the timer's goroutine: one Ping, then re-arm, or close on a missing Pong.
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
	err := s.ws.Ping(ctx)
	cancel()
	if err != nil {
		s.hub.log.Debug("closing rendezvous socket without pong", "environment_id", s.env.id)
		s.close()
		return
	}
	s.schedulePing()
}

// enqueue queues b and starts the writer when none runs. wait < 0 blocks until there is
// room; otherwise it fails with errQueueTimeout after wait.
func (s *socket) enqueue(b []byte, wait time.Duration) error {
	start, err := s.q.push(b, wait)
	if err != nil {
		return err
	}
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
		batch = s.q.take(batch[:0], writeBatch)
		if len(batch) == 0 {
			return
		}
		for _, b := range batch {
			if err := s.conn.WriteFrame(s.hub.life, b); err != nil {
				s.close()
				clear(batch)
				// Mark the writer stopped so a later push (which will fail anyway) does
				// not wait for it.
				s.q.take(batch[:0], 0)
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
		if errors.Is(err, mux.ErrNonBinary) {
			s.hub.dropped.Add(1)
			continue
		}
		return b, err
	}
}

// executorReadLoop routes the executor's frames to harness sockets by stream id.
func (s *socket) executorReadLoop() {
	var f frame.Frame
	for {
		b, err := s.readFrame()
		if err != nil {
			return
		}
		if frame.Decode(&f, b) != nil || f.Validate() != nil {
			s.hub.dropped.Add(1)
			continue
		}
		s.env.mu.Lock()
		t := s.env.streams[f.StreamID]
		s.env.mu.Unlock()
		if t == nil || t.exec != s {
			s.hub.dropped.Add(1)
			continue
		}
		if err := t.enqueue(b, s.hub.opts.SlowConsumerTimeout); err != nil {
			if errors.Is(err, errQueueTimeout) {
				s.hub.slowConsumers.Add(1)
				s.hub.log.Debug("closing slow harness socket", "environment_id", s.env.id)
				t.close()
			}
		}
	}
}

// harnessReadLoop forwards the harness's frames of its one stream to the bound executor
// socket. The first valid frame claims the stream id.
func (s *socket) harnessReadLoop() {
	var f frame.Frame
	claimed := ""
	for {
		b, err := s.readFrame()
		if err != nil {
			return
		}
		if frame.Decode(&f, b) != nil || f.Validate() != nil {
			s.hub.dropped.Add(1)
			continue
		}
		if claimed == "" {
			if !s.claim(f.StreamID) {
				s.hub.claimConflicts.Add(1)
				s.hub.log.Debug("closing harness socket claiming a held stream id", "environment_id", s.env.id)
				return
			}
			claimed = s.streamID
		} else if f.StreamID != claimed {
			s.hub.dropped.Add(1)
			continue
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
