package harness

// Session recovery (see session_conn.go's protocol flow): replacing a broken physical
// connection within the recovery window, attempt by attempt with back-off, and re-attaching
// the session on the new one (resume, re-sent requests, catch-up).

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"slices"
	"strconv"
	"syscall"
	"time"

	"github.com/execlab/executor/executor/protocol"
	"github.com/execlab/executor/jsonwire"
	"github.com/execlab/executor/noise/channel"
)

// errSessionLost: the executor no longer knows the session (expired or evicted).
var errSessionLost = errors.New("harness: executor session could not be resumed")

// recoveryState is one session recovery across the ReadMessage calls that deliver what its
// failed attempts caught up.
type recoveryState struct {
	deadline time.Time     // attempts start until then (the final one at it)
	delay    time.Duration // back-off before the next attempt
	cause    error
}

// recover replaces the broken physical connection (see the file comment). It holds the
// write semaphore while it runs, so the Client's writes wait for it. An attempt that fails
// after catching up new events (s.caughtUp moved) extends the deadline to a full window
// from now, resets the back-off and returns nil with s.rec set, so ReadMessage delivers
// those events and calls recover again; only an attempt without progress spends the window.
func (s *sessionConn) recover(ctx context.Context, cause error) error {
	fresh := s.rec == nil
	if fresh {
		s.log.Debug("relay stream lost; recovering session", "error", cause.Error())
		if s.onReconnect != nil {
			s.onReconnect(false, cause)
		}
		// Close the broken connection first: a writer blocked on it then fails fast and
		// releases the write semaphore.
		s.mu.Lock()
		_ = s.cur.Close()
		s.mu.Unlock()
	}
	select {
	case s.wsem <- struct{}{}:
	case <-ctx.Done():
		s.rec = nil
		return ctx.Err()
	}
	defer func() { <-s.wsem }()

	// Attempts start until the window's deadline; the last one starts at the deadline
	// itself and may take up to finalAttemptBudget (a connect, a handshake, a resume).
	s.mu.Lock()
	window := s.timeout
	s.mu.Unlock()
	if fresh {
		s.rec = &recoveryState{deadline: time.Now().Add(window), delay: recoveryBackoffInitial, cause: cause}
	}
	st := s.rec
	rctx, cancel := context.WithDeadline(ctx, st.deadline.Add(finalAttemptBudget))
	defer cancel()
	var err error
	for {
		before := s.caughtUp
		var conn MessageConn
		conn, err = s.dial(rctx)
		if err == nil {
			s.mu.Lock()
			s.cur = conn
			s.mu.Unlock()
			if s.acks != nil {
				s.acks.setFlowControlled(flowControlled(conn))
			}
			if err = s.reattach(rctx, conn); err == nil {
				break
			}
			_ = conn.Close()
		}
		if !recoverable(err) || ctx.Err() != nil || errors.Is(err, ErrExecutorExited) {
			break // an exited executor's session cannot come back: stop at once
		}
		if s.caughtUp != before {
			// Progress: deliver it, then try again at once with a fresh window.
			s.log.Debug("recovery attempt failed after catching up", "error", err.Error(), "events", s.caughtUp-before)
			if d := time.Now().Add(window); d.After(st.deadline) {
				st.deadline = d
			}
			st.delay = recoveryBackoffInitial
			return nil
		}
		if rctx.Err() != nil {
			break
		}
		s.log.Debug("recovery attempt failed", "error", err.Error())
		wait, ok := nextAttempt(time.Now(), st.deadline, st.delay+rand.N(st.delay/2+1))
		if !ok || !sleepCtx(rctx, wait) {
			break
		}
		st.delay = min(st.delay*2, recoveryBackoffMax)
	}
	s.rec = nil
	if s.onReconnect != nil {
		s.onReconnect(true, err)
	}
	if err != nil {
		return fmt.Errorf("recovering executor session: %w", err)
	}
	return nil
}

// nextAttempt returns how long to wait before the next recovery attempt: the back-off
// delay, cut so that the last attempt starts at the deadline; ok is false once the
// deadline has passed (the final attempt was made).
func nextAttempt(now, deadline time.Time, delay time.Duration) (time.Duration, bool) {
	left := deadline.Sub(now)
	if left <= 0 {
		return 0, false
	}
	return min(delay, left), true
}

// sleepCtx waits d and reports true, or false when ctx ends first.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	select {
	case <-time.After(d): // collected once unreferenced, fired or not (Go ≥ 1.23)
		return true
	case <-ctx.Done():
		return false
	}
}

// unreachable reports whether err says the registry or rendezvous address is wrong: the
// connection was refused (nothing listens there) or the host name does not exist.
func unreachable(err error) bool {
	var dnsErr *net.DNSError
	return errors.Is(err, syscall.ECONNREFUSED) || (errors.As(err, &dnsErr) && dnsErr.IsNotFound)
}

// recoverable reports whether a failed attempt is worth another one.
func recoverable(err error) bool {
	var ce *ConnectError
	switch {
	case errors.As(err, &ce):
		return ce.Retryable
	case errors.Is(err, channel.ErrExecutorCredentialsRejected),
		errors.Is(err, errIncompleteBundle),
		errors.Is(err, errSessionLost):
		return false
	}
	return true
}

// reattach runs on a fresh connection: resume, re-send, catch up. Messages that arrive
// meanwhile are queued after the synthesized ones.
//
// If the attempt fails after the resume, the process events that arrived live are kept
// (admitted and queued like catch-up events): on a lossy stream without ARQ, the live
// output of a busy process is what breaks it, and keeping it is progress too.
func (s *sessionConn) reattach(ctx context.Context, conn MessageConn) (err error) {
	var synth, live [][]byte
	defer func() {
		if err != nil {
			s.admitCaughtUp(processEvents(live))
		}
	}()
	s.mu.Lock()
	sid, name := s.sessionID, s.clientName
	s.mu.Unlock()
	if sid != "" {
		for {
			params, _ := json.Marshal(protocol.InitializeParams{ClientName: name, ResumeSessionID: &sid})
			_, rpcErr, err := s.roundTrip(ctx, conn, protocol.MethodInitialize, params, &live)
			if err != nil {
				return err
			}
			if rpcErr == nil {
				break
			}
			if rpcErr.Code != jsonwire.CodeSessionAttached {
				return fmt.Errorf("%w: %s", errSessionLost, rpcErr.Message)
			}
			if !sleepCtx(ctx, resumeRetryInterval) {
				return ctx.Err()
			}
		}
		if err := conn.WriteMessage(ctx, []byte(`{"method":"initialized","params":{}}`)); err != nil {
			return fmt.Errorf("sending initialized: %w", err)
		}
	}

	// In-flight requests, oldest first.
	s.mu.Lock()
	reqs := make([]struct {
		id string
		*inflightReq
	}, 0, len(s.inflight))
	for id, r := range s.inflight {
		reqs = append(reqs, struct {
			id string
			*inflightReq
		}{id, r})
	}
	s.mu.Unlock()
	slices.SortFunc(reqs, func(a, b struct {
		id string
		*inflightReq
	}) int {
		return int(a.order) - int(b.order)
	})
	for _, r := range reqs {
		if retrySafe(r.method) || (r.method == protocol.MethodInitialize && sid == "") {
			if err := conn.WriteMessage(ctx, r.msg); err != nil {
				return fmt.Errorf("re-sending %s: %w", r.method, err)
			}
			continue
		}
		// Not safe to repeat: fail it (admit removes it from inflight on delivery).
		synth = append(synth, appendErrorResponse(nil, []byte(r.id), CodeConnectionLost,
			"connection to the executor was lost; the request may or may not have been applied"))
	}

	if sid != "" {
		if err := s.catchUpAll(ctx, conn, &live); err != nil {
			return err
		}
	}
	s.queue = append(append(s.queue, synth...), live...)
	return nil
}

// roundTrip sends one internal request on conn and waits for its reply, at most
// recoveryRequestTimeout (a lost request or reply on a faulty relay then fails the attempt
// instead of the whole recovery window); other messages read meanwhile are appended to live.
func (s *sessionConn) roundTrip(ctx context.Context, conn MessageConn, method string, params []byte, live *[][]byte) ([]byte, *RPCError, error) {
	return s.roundTripTimeout(ctx, conn, method, params, live, recoveryRequestTimeout)
}

// roundTripTimeout is roundTrip bounded by timeout.
func (s *sessionConn) roundTripTimeout(ctx context.Context, conn MessageConn, method string, params []byte, live *[][]byte, timeout time.Duration) ([]byte, *RPCError, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	s.internalID++
	id := strconv.Quote("harness-recovery-" + strconv.Itoa(s.internalID))
	msg := append([]byte(`{"id":`+id+`,"method":`+strconv.Quote(method)+`,"params":`), params...)
	msg = append(msg, '}')
	if err := conn.WriteMessage(ctx, msg); err != nil {
		return nil, nil, fmt.Errorf("sending %s: %w", method, err)
	}
	for {
		b, err := conn.ReadMessage(ctx)
		if err != nil {
			return nil, nil, fmt.Errorf("waiting for %s: %w", method, err)
		}
		m, err := parseMessage(b)
		if err != nil || (m.kind != jsonwire.KindResponse && m.kind != jsonwire.KindError) || string(m.id) != id {
			*live = append(*live, b)
			continue
		}
		if m.kind == jsonwire.KindResponse {
			return m.result, nil, nil
		}
		var e RPCError
		if err := json.Unmarshal(m.errRaw, &e); err != nil {
			return nil, nil, fmt.Errorf("%w: decoding %s error: %w", ErrProtocol, method, err)
		}
		return nil, &e, nil
	}
}
