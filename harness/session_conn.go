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

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/execlab/executor/executor/protocol"
	"github.com/execlab/executor/jsonwire"
	"github.com/execlab/executor/noise/channel"
)

// errSessionLost: the executor no longer knows the session (expired or evicted).
var errSessionLost = errors.New("harness: executor session could not be resumed")

// retrySafe reports whether a recovery re-sends method as it was: repeating it cannot apply
// anything twice. The property lives with the method in executor/protocol
// (method_props.go), which the executor's method table is checked against.
func retrySafe(method string) bool { return protocol.RetrySafe(method) }

type inflightReq struct {
	order  uint64
	method string
	msg    []byte
}

// procState is what has been delivered of one process's events. The reference sends exit
// and close from separate tasks, so they may overtake output: delivery is tracked as a
// contiguous watermark plus the seqs delivered above it.
type procState struct {
	watermark uint64          // every seq ≤ watermark was delivered
	above     map[uint64]bool // delivered seqs > watermark
	exitSeen  bool
	closeSeq  uint64 // seq of process/closed once delivered, else 0
}

// delivered reports whether seq was already delivered.
func (p *procState) delivered(seq uint64) bool { return seq <= p.watermark || p.above[seq] }

// mark records seq as delivered.
func (p *procState) mark(seq uint64) {
	if p.above == nil {
		p.above = make(map[uint64]bool)
	}
	p.above[seq] = true
	for p.above[p.watermark+1] {
		delete(p.above, p.watermark+1)
		p.watermark++
	}
}

// done reports whether every event up to and including the close was delivered.
func (p *procState) done() bool { return p.closeSeq != 0 && p.watermark >= p.closeSeq }

func (p procState) clone() procState {
	c := p
	c.above = make(map[uint64]bool, len(p.above))
	for k := range p.above {
		c.above[k] = true
	}
	return c
}

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

// recoveryState is one session recovery across the ReadMessage calls that deliver what its
// failed attempts caught up.
type recoveryState struct {
	deadline time.Time     // attempts start until then (the final one at it)
	delay    time.Duration // back-off before the next attempt
	cause    error
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

// ReadMessage returns the next message for the Client, recovering the session when the
// physical connection breaks.
// ReleaseMessage hands back a message ReadMessage returned (messageReleaser): every
// connection of a sessionConn is a relay stream's Noise channel, whose large messages are
// pooled (channel.ReleaseMessage); messages the sessionConn made itself are simply
// collected.
func (s *sessionConn) ReleaseMessage(msg []byte) { channel.ReleaseMessage(msg) }

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

// observeOutgoingLocked records requests (and what initialize and process/start tell).
func (s *sessionConn) observeOutgoingLocked(msg []byte) {
	if isTunnelNotification(msg) {
		return // bulk data that no recovery replays (tunnel.go): not parsed twice
	}
	m, err := parseMessage(msg)
	if err != nil || m.kind != jsonwire.KindRequest {
		return
	}
	s.order++
	s.inflight[string(m.id)] = &inflightReq{order: s.order, method: m.method, msg: msg}
	switch m.method {
	case protocol.MethodInitialize:
		var p struct {
			ClientName string `json:"clientName"`
		}
		if json.Unmarshal(m.params, &p) == nil {
			s.clientName = p.ClientName
		}
	case protocol.MethodProcessStart:
		if pid, ok := memberString(m.params, "processId"); ok {
			if _, exists := s.procs[pid]; !exists {
				s.procs[pid] = &procState{}
			}
		}
	}
}

// admit updates the session state for a message about to be delivered and reports whether
// to deliver it (false for a process event whose seq was already delivered).
func (s *sessionConn) admit(b []byte) bool {
	if isTunnelNotification(b) {
		return true
	}
	m, err := parseMessage(b)
	if err != nil {
		return true // the Client reports the protocol violation
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch m.kind {
	case jsonwire.KindResponse, jsonwire.KindError:
		req := s.inflight[string(m.id)]
		if req == nil {
			return true
		}
		delete(s.inflight, string(m.id))
		switch {
		case req.method == protocol.MethodInitialize && m.kind == jsonwire.KindResponse:
			if sid, ok := memberString(m.result, "sessionId"); ok {
				s.sessionID = sid
			}
		case req.method == protocol.MethodProcessStart && m.kind == jsonwire.KindError:
			if rm, err := parseMessage(req.msg); err == nil {
				if pid, ok := memberString(rm.params, "processId"); ok {
					delete(s.procs, pid)
				}
			}
		}
	case jsonwire.KindNotification:
		switch m.method {
		case protocol.MethodProcessOutput, protocol.MethodProcessExited, protocol.MethodProcessClosed:
		case MethodOutputGap:
			s.admitGapLocked(m.params)
			return true
		default:
			return true
		}
		pid, ok1 := memberString(m.params, "processId")
		seq, ok2 := memberUint(m.params, "seq")
		p := s.procs[pid]
		if !ok1 || !ok2 || p == nil {
			return true
		}
		if p.delivered(seq) {
			return false
		}
		p.mark(seq)
		switch m.method {
		case protocol.MethodProcessExited:
			p.exitSeen = true
		case protocol.MethodProcessClosed:
			p.closeSeq = seq
		}
		if p.done() {
			delete(s.procs, pid) // nothing follows a close
		}
	}
	return true
}

// admitGapLocked records a synthesized gap's seqs as delivered (they will never come), or
// forgets the process after a final one.
func (s *sessionConn) admitGapLocked(params []byte) {
	var g OutputGap
	if json.Unmarshal(params, &g) != nil {
		return
	}
	p := s.procs[g.ProcessID]
	if p == nil {
		return
	}
	if g.Final {
		delete(s.procs, g.ProcessID)
		return
	}
	for seq := g.Seq; seq <= g.LastSeq && seq >= g.Seq; seq++ {
		p.mark(seq)
	}
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
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// recoverable reports whether a failed attempt is worth another one.
// unreachable reports whether err says the registry or rendezvous address is wrong: the
// connection was refused (nothing listens there) or the host name does not exist.
func unreachable(err error) bool {
	var dnsErr *net.DNSError
	return errors.Is(err, syscall.ECONNREFUSED) || (errors.As(err, &dnsErr) && dnsErr.IsNotFound)
}

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

// catchUpAll brings every tracked process up to date on a resumed connection. Processes
// started with outputAck are replayed by the executor from their last ack, so only their
// acks are re-sent (the last ones may have been lost with the old connection); the others
// are caught up with process/read (catchUpProcess), whose events go to s.ready at once.
// Messages read meanwhile are appended to live.
func (s *sessionConn) catchUpAll(ctx context.Context, conn MessageConn, live *[][]byte) error {
	s.mu.Lock()
	pids := make([]string, 0, len(s.procs))
	for pid := range s.procs {
		pids = append(pids, pid)
	}
	s.mu.Unlock()
	slices.Sort(pids)
	if s.acks != nil {
		for _, msg := range s.acks.snapshot() {
			if err := conn.WriteMessage(ctx, msg); err != nil {
				return fmt.Errorf("re-sending process/ack: %w", err)
			}
		}
	}
	for _, pid := range pids {
		if s.acks != nil && s.acks.has(pid) {
			continue
		}
		if err := s.catchUpProcess(ctx, conn, pid, live); err != nil {
			return err
		}
	}
	return nil
}

// catchUpProcess reads what pid's executor retained after the delivered watermark in
// answers of at most catchUpReadBytes (spec/jsonrpc.md §3.2: maxBytes is a decoded-byte
// budget, the first chunk always comes, nextSeq is the last returned seq + 1), admitting
// each answer's events before the next read. It stops at a read that returns no chunk (its
// nextSeq, exit and close are then the process's: the reference's catch-up rules apply),
// or once the watermark reaches the first live event of pid (the live stream carries the
// rest). A capped read that moves nothing (a hole that is not provably lost) is followed
// by one uncapped read, the reference client's request.
func (s *sessionConn) catchUpProcess(ctx context.Context, conn MessageConn, pid string, live *[][]byte) error {
	capped := true
	for range maxCatchUpReads {
		s.mu.Lock()
		cur := s.procs[pid]
		var p procState
		if cur != nil {
			p = cur.clone()
		}
		s.mu.Unlock()
		if cur == nil {
			return nil // done (its close was delivered)
		}
		if first, ok := firstLiveSeq(*live, pid); ok && p.watermark+1 >= first {
			return nil
		}
		params := map[string]any{"processId": pid, "afterSeq": p.watermark, "waitMs": 0}
		if capped {
			params["maxBytes"] = catchUpReadBytes
		}
		raw, _ := json.Marshal(params)
		res, rpcErr, err := s.roundTripTimeout(ctx, conn, protocol.MethodProcessRead, raw, live, catchUpReadTimeout)
		if err != nil {
			return err
		}
		if rpcErr != nil {
			// Unknown: evicted (or never started). Whatever was not delivered, the exit
			// included, is gone; say so rather than wait for it.
			s.admitCaughtUp([][]byte{gapNotification(OutputGap{ProcessID: pid, Seq: p.watermark + 1, Final: true})})
			return nil
		}
		var r catchUpResult
		if err := json.Unmarshal(res, &r); err != nil {
			return fmt.Errorf("%w: decoding process/read result: %w", ErrProtocol, err)
		}
		partial := capped && len(r.Chunks) > 0
		s.admitCaughtUp(catchUpEvents(pid, p, r, partial))
		if !partial {
			return nil
		}
		s.mu.Lock()
		moved := s.procs[pid] == nil || s.procs[pid].watermark != p.watermark
		s.mu.Unlock()
		capped = moved
	}
	return fmt.Errorf("catching up %s: %d reads did not reach its live output", pid, maxCatchUpReads)
}

// admitCaughtUp admits catch-up events now (the watermark moves, so the next read and the
// next attempt start after them) and queues them for delivery ahead of everything else.
func (s *sessionConn) admitCaughtUp(msgs [][]byte) {
	for _, m := range msgs {
		if s.admit(m) {
			s.ready = append(s.ready, m)
			s.caughtUp++
		}
	}
}

// processEvents returns the process/output, process/exited and process/closed
// notifications among msgs, in order.
func processEvents(msgs [][]byte) [][]byte {
	var out [][]byte
	for _, b := range msgs {
		m, err := parseMessage(b)
		if err != nil || m.kind != jsonwire.KindNotification {
			continue
		}
		switch m.method {
		case protocol.MethodProcessOutput, protocol.MethodProcessExited, protocol.MethodProcessClosed:
			out = append(out, b)
		}
	}
	return out
}

// firstLiveSeq returns the lowest seq of pid's process events among live messages.
func firstLiveSeq(live [][]byte, pid string) (uint64, bool) {
	var first uint64
	found := false
	for _, b := range live {
		m, err := parseMessage(b)
		if err != nil || m.kind != jsonwire.KindNotification {
			continue
		}
		switch m.method {
		case protocol.MethodProcessOutput, protocol.MethodProcessExited, protocol.MethodProcessClosed:
		default:
			continue
		}
		if id, ok := memberString(m.params, "processId"); !ok || id != pid {
			continue
		}
		if seq, ok := memberUint(m.params, "seq"); ok && (!found || seq < first) {
			first, found = seq, true
		}
	}
	return first, found
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

// catchUp turns a process/read result into the notifications the Client has not been
// delivered (spec/jsonrpc.md §2.5): chunks as process/output; if closed, the close at
// nextSeq−1; a missed exit at the one remaining hole. Any other hole is output the
// executor evicted (a released executor keeps 1 MiB): it becomes a harness/outputGap
// (docs/reliability.md §6) instead of a seq the Client would wait for forever. When the
// exit itself fell among the evicted events, it takes the last seq of that run (its code
// is known from the read), so the exit status is still delivered, in order, before the
// close.
func catchUp(pid string, p procState, result []byte) ([][]byte, error) {
	var r catchUpResult
	if err := json.Unmarshal(result, &r); err != nil {
		return nil, fmt.Errorf("%w: decoding process/read result: %w", ErrProtocol, err)
	}
	return catchUpEvents(pid, p, r, false), nil
}

// catchUpEvents is catchUp on a decoded result. partial marks a capped read that returned
// chunks: its nextSeq is only the last returned seq + 1 and more may follow, so no close
// is derived from it, holes are looked for only up to its last chunk, and the exit is
// placed only in a hole between returned chunks (the one place it can provably be); every
// hole below the first returned chunk is evicted output, reported as a gap. (A process
// whose exit was itself evicted by more than the ring of later output — a child that
// outlived it — then gets its close without an exit status.)
func catchUpEvents(pid string, p procState, r catchUpResult, partial bool) [][]byte {
	var evs []seqMsg
	have := make(map[uint64]bool, len(r.Chunks))
	firstChunk := uint64(0)
	for _, c := range r.Chunks {
		have[c.Seq] = true
		if firstChunk == 0 || c.Seq < firstChunk {
			firstChunk = c.Seq
		}
		if p.delivered(c.Seq) {
			continue
		}
		b, _ := json.Marshal(map[string]any{"method": protocol.MethodProcessOutput,
			"params": map[string]any{"processId": pid, "seq": c.Seq, "stream": c.Stream, "chunk": c.Chunk}})
		evs = append(evs, seqMsg{c.Seq, b})
	}
	var closeSeq uint64
	nextSeq := r.NextSeq
	if partial {
		nextSeq = 0
		for _, c := range r.Chunks {
			nextSeq = max(nextSeq, c.Seq+1)
		}
	} else if r.Closed && r.NextSeq > 0 {
		closeSeq = r.NextSeq - 1
	}
	holes := holeRuns(p, have, closeSeq, nextSeq)
	// Holes above the first returned chunk can only be the exit (a ring evicts its oldest
	// chunks); holes below it are evicted output, or the exit evicted with it.
	if r.Exited && !p.exitSeen && len(holes) > 0 {
		if exitSeq := missedExitSeq(holes, firstChunk, partial); exitSeq != 0 {
			evs, holes = appendExit(evs, holes, pid, exitSeq, r)
		}
	}
	for _, h := range holes {
		if firstChunk != 0 && h.first > firstChunk {
			break // not provably lost (see above)
		}
		evs = append(evs, seqMsg{h.first, gapNotification(OutputGap{ProcessID: pid, Seq: h.first, LastSeq: h.last})})
	}
	if closeSeq != 0 && !p.delivered(closeSeq) {
		b, _ := json.Marshal(map[string]any{"method": protocol.MethodProcessClosed,
			"params": map[string]any{"processId": pid, "seq": closeSeq}})
		evs = append(evs, seqMsg{closeSeq, b})
	}
	slices.SortFunc(evs, func(a, b seqMsg) int { return cmp.Compare(a.seq, b.seq) })
	out := make([][]byte, len(evs))
	for i, e := range evs {
		out[i] = e.msg
	}
	return out
}

// missedExitSeq is where a missed exit goes among the holes (non-empty): the first hole
// above the first returned chunk, else the end of the lost run below it (or the last hole
// when no chunk came); 0 when a partial read leaves it undecided (see catchUpEvents).
func missedExitSeq(holes []seqRun, firstChunk uint64, partial bool) uint64 {
	exitSeq := holes[len(holes)-1].last // none among the retained chunks: end of the lost run
	if partial {
		exitSeq = 0 // only between the returned chunks
	}
	for _, h := range holes {
		if firstChunk != 0 && h.first > firstChunk {
			return h.first
		}
		if firstChunk != 0 && h.first < firstChunk && !partial {
			exitSeq = h.last
		}
	}
	return exitSeq
}

// appendExit adds the exit event at exitSeq and removes that seq from the holes.
func appendExit(evs []seqMsg, holes []seqRun, pid string, exitSeq uint64, r catchUpResult) ([]seqMsg, []seqRun) {
	code := int32(0)
	if r.ExitCode != nil {
		code = *r.ExitCode
	}
	b, _ := json.Marshal(map[string]any{"method": protocol.MethodProcessExited,
		"params": map[string]any{"processId": pid, "seq": exitSeq, "exitCode": code, "sandboxDenied": r.SandboxDenied}})
	return append(evs, seqMsg{exitSeq, b}), removeSeq(holes, exitSeq)
}

// catchUpResult is the part of a process/read result a catch-up reads.
type catchUpResult struct {
	Chunks []struct {
		Seq    uint64 `json:"seq"`
		Stream string `json:"stream"`
		Chunk  string `json:"chunk"`
	} `json:"chunks"`
	NextSeq       uint64 `json:"nextSeq"`
	Exited        bool   `json:"exited"`
	ExitCode      *int32 `json:"exitCode"`
	Closed        bool   `json:"closed"`
	SandboxDenied bool   `json:"sandboxDenied"`
}

// seqRun is a run of seqs, first…last.
type seqRun struct{ first, last uint64 }

// holeRuns returns, in order, the runs of assigned seqs (watermark < seq < nextSeq) that
// were neither delivered, nor returned (have), nor the close. It walks the known seqs, not
// the range, so a huge nextSeq costs nothing.
func holeRuns(p procState, have map[uint64]bool, closeSeq, nextSeq uint64) []seqRun {
	if nextSeq <= p.watermark+1 {
		return nil
	}
	known := make([]uint64, 0, len(have)+len(p.above)+1)
	for seq := range have {
		known = append(known, seq)
	}
	for seq := range p.above {
		known = append(known, seq)
	}
	if closeSeq != 0 {
		known = append(known, closeSeq)
	}
	slices.Sort(known)
	var runs []seqRun
	next := p.watermark + 1 // first seq not yet accounted for
	for _, k := range known {
		if k < next || k >= nextSeq {
			continue
		}
		if k > next {
			runs = append(runs, seqRun{next, k - 1})
		}
		next = k + 1
	}
	if next < nextSeq {
		runs = append(runs, seqRun{next, nextSeq - 1})
	}
	return runs
}

// removeSeq removes seq from the runs, splitting the run that holds it.
func removeSeq(runs []seqRun, seq uint64) []seqRun {
	out := make([]seqRun, 0, len(runs)+1)
	for _, r := range runs {
		if seq < r.first || seq > r.last {
			out = append(out, r)
			continue
		}
		if r.first < seq {
			out = append(out, seqRun{r.first, seq - 1})
		}
		if seq < r.last {
			out = append(out, seqRun{seq + 1, r.last})
		}
	}
	return out
}

// seqMsg is a synthesized message and the seq it is ordered by.
type seqMsg struct {
	seq uint64
	msg []byte
}
