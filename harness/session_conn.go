package harness

// Session recovery for remote connections (spec/jsonrpc.md §2.5, spec/relay-noise.md §13).
//
// sessionConn sits between the Client and the physical secure channel. It watches the
// messages that pass (requests out; responses and process notifications in) and keeps what a
// recovery needs: the session id, the in-flight requests, and per process the highest seq
// delivered. When the physical connection breaks, the next ReadMessage runs the recovery on
// the Client's read loop:
//
//	dial (fresh bundle, socket, stream id, handshake)        retried with backoff ≤ 25 s
//	-> initialize{resumeSessionId} (-32010 retried every 100 ms) -> initialized
//	-> re-send in-flight requests that are safe to repeat (process/write keeps its writeId,
//	   so the executor applies it once); fail the others with CodeConnectionLost
//	-> process/read{afterSeq: last delivered, maxBytes: 64 KiB, waitMs: 0} per tracked
//	   process, repeated from the new watermark until a read returns no chunk (or the live
//	   notifications cover the rest), each answer turned into process/output /
//	   process/exited / process/closed notifications and marked delivered at once, so a
//	   stream that breaks mid catch-up keeps what the earlier reads brought
//	-> deliver those, then whatever arrived meanwhile, dropping process events whose seq was
//	   already delivered, so each process's stream stays contiguous and duplicate-free.
//
// An attempt that fails after delivering new events extends the recovery deadline to a
// full window from now and hands those events to the Client before the next attempt: the
// window measures a lack of progress, not the time spent (docs/reliability.md §5).
//
// Files by job: session_conn.go (this one) holds the type and the read and send paths;
// session_track.go what it watches as messages pass (in-flight requests, delivered process
// seqs); session_recover.go the recovery attempts and the re-attach; session_catchup.go the
// process/read catch-up and the notifications it synthesizes.

import (
	"context"
	"log/slog"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/execlab/executor/noise/channel"
)

// sessionConn is a MessageConn that survives physical reconnects. ReadMessage is called by
// one goroutine (the Client's read loop), which also runs recoveries; WriteMessage by one
// goroutine at a time.
type sessionConn struct {
	dial        func(context.Context) (MessageConn, error)
	timeout     time.Duration // the recovery window; guarded by mu (boundBySessionTTL)
	onReconnect func(done bool, err error)
	log         *slog.Logger

	// wsem serialises physical writes and recoveries (a one-slot semaphore so waiting
	// honours ctx): a write never lands between a recovery's initialize and its re-sends.
	wsem chan struct{}

	// mu guards the fields below: WriteMessage records requests while ReadMessage resolves
	// them.
	mu         sync.Mutex
	cur        MessageConn
	closed     bool
	sessionID  string
	clientName string
	inflight   map[string]*inflightReq // raw JSON id → request
	order      uint64
	procs      map[string]*procState
	// acks is the Client's ack tracker (set before the Client starts reading): processes
	// started with outputAck are replayed by the executor, not caught up with process/read.
	acks *outputAcks

	// Read-side state, touched only by ReadMessage's goroutine.
	ready      [][]byte // caught-up events already admitted: delivered first, as they are
	queue      [][]byte // messages to deliver before reading cur
	internalID int
	// rec is the recovery in progress when an attempt that made progress returned to
	// deliver it (ReadMessage then continues it); nil otherwise.
	rec *recoveryState
	// caughtUp counts the catch-up events admitted: an attempt that raised it made progress.
	caughtUp uint64
}

// newSessionConn makes the first connection, retrying recoverable failures (an environment
// whose executor is not connected yet answers 409 environment_offline) with the recovery
// backoff for at most connectTimeout, or until ctx ends; timeout bounds later recoveries.
func newSessionConn(ctx context.Context, dial func(context.Context) (MessageConn, error), connectTimeout, timeout time.Duration, onReconnect func(bool, error), log *slog.Logger) (*sessionConn, error) {
	dctx, cancel := context.WithTimeout(ctx, connectTimeout)
	defer cancel()
	var conn MessageConn
	var err error
	delay := recoveryBackoffInitial
	for {
		conn, err = dial(dctx)
		// A first connection that finds nothing listening, or a name that does not
		// resolve, is a wrong address rather than an environment that is offline: it
		// fails at once, as ssh does. Connections that were up keep their window.
		if err == nil || !recoverable(err) || unreachable(err) {
			break
		}
		if !sleepCtx(dctx, delay+rand.N(delay/2+1)) {
			break
		}
		delay = min(delay*2, recoveryBackoffMax)
	}
	if err != nil {
		return nil, err
	}
	return &sessionConn{
		dial: dial, timeout: timeout, onReconnect: onReconnect, log: log,
		wsem: make(chan struct{}, 1), cur: conn,
		inflight: make(map[string]*inflightReq), procs: make(map[string]*procState),
	}, nil
}

// boundBySessionTTL shortens the recovery window to the executor's advertised session TTL
// plus sessionTTLSlack when that is shorter (docs/reliability.md §5): past it the
// executor has killed the session's processes, so a resume cannot succeed and retrying
// longer only delays the error. Called by Client.Initialize; ttl ≤ 0 (a released executor
// advertises none) changes nothing.
func (s *sessionConn) boundBySessionTTL(ttl time.Duration) {
	if ttl <= 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if lim := ttl + sessionTTLSlack; lim < s.timeout {
		s.log.Debug("recovery window bounded by the executor's session TTL", "window", lim)
		s.timeout = lim
	}
}

// ReleaseMessage hands back a message ReadMessage returned (messageReleaser): every
// connection of a sessionConn is a relay stream's Noise channel, whose large messages are
// pooled (channel.ReleaseMessage); messages the sessionConn made itself are simply
// collected.
func (s *sessionConn) ReleaseMessage(msg []byte) { channel.ReleaseMessage(msg) }

// ReadMessage returns the next message for the Client, recovering the session when the
// physical connection breaks.
func (s *sessionConn) ReadMessage(ctx context.Context) ([]byte, error) {
	for {
		if len(s.ready) > 0 {
			m := s.ready[0]
			s.ready[0] = nil
			s.ready = s.ready[1:]
			return m, nil
		}
		if len(s.queue) > 0 {
			m := s.queue[0]
			s.queue[0] = nil
			s.queue = s.queue[1:]
			if s.admit(m) {
				return m, nil
			}
			continue
		}
		s.mu.Lock()
		conn, closed := s.cur, s.closed
		s.mu.Unlock()
		if closed {
			return nil, ErrClosed
		}
		if s.rec != nil { // a recovery returned to deliver its progress: continue it
			if rerr := s.recover(ctx, s.rec.cause); rerr != nil {
				return nil, rerr
			}
			continue
		}
		b, err := conn.ReadMessage(ctx)
		if err == nil {
			if s.admit(b) {
				return b, nil
			}
			continue
		}
		if ctx.Err() != nil || s.isClosed() {
			return nil, err
		}
		if rerr := s.recover(ctx, err); rerr != nil {
			return nil, rerr
		}
	}
}

// WriteMessage sends msg on the current physical connection. A request is recorded as in
// flight first; if the write fails, the connection is treated as broken and the recovery
// takes care of the request, so no error is returned for it.
func (s *sessionConn) WriteMessage(ctx context.Context, msg []byte) error {
	select {
	case s.wsem <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-s.wsem }()
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return ErrClosed
	}
	conn := s.cur
	s.observeOutgoingLocked(msg)
	s.mu.Unlock()
	if err := conn.WriteMessage(ctx, msg); err != nil {
		if s.isClosed() {
			return ErrClosed
		}
		s.log.Debug("write failed; the session will recover", "error", err.Error())
		_ = conn.Close() // wakes the reader, which recovers
	}
	return nil
}

// Close closes the current physical connection; later calls fail with ErrClosed.
func (s *sessionConn) Close() error {
	s.mu.Lock()
	s.closed = true
	conn := s.cur
	s.mu.Unlock()
	return conn.Close()
}

func (s *sessionConn) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}
