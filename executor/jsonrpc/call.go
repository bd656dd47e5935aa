package jsonrpc

// Server→client requests (spec/network-proxy.md §6) and best-effort notifications (§7).
//
// Protocol flow: Call allocates the next id of the connection (1, 2, …, never reused on
// it; a session resumed on a new connection starts again at 1, as 0.171.0 does),
// registers a pending entry, queues
//
//	{"id":N,"method":M,"params":P}
//
// (no "jsonrpc" member, the reference's member order) on the ordinary outbound queue,
// then waits for one of: the client's reply, routed by id from the read loop; ctx; or the
// end of the read loop (disconnect, ErrClose, Run's ctx), which fails every pending call
// at once with ErrConnClosed. A reply read before the end still completes its call.
//
// Inbound replies (Kind response or error) are classified on the read loop, never
// queued behind a request (codex 0.171.0, probed):
//
//	integer id in 1…last issued, call pending   → delivered to that Call
//	integer id in 1…last issued, none pending   → ignored (a duplicate, or late after the
//	                                              caller gave up); counted as Late
//	anything else (0, negative, never issued,   → the connection is closed without a
//	string id, even "1")                           reply, as before any call (test/
//	                                              conformance handshake_client_*_closes)
//
// NotifyBestEffort never waits: it queues a notification only when at least
// BestEffortReserve slots (and BestEffortReserveBytes bytes) of the outbound queue stay
// free for replies and process notifications afterwards, else drops it and counts it.
// It shares the FIFO queue with every other message, so wire order is arrival order, as
// in the reference's single outbound channel.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
)

// Errors of Call and NotifyBestEffort, for callers that branch on them (the network
// proxy maps each to a fail-closed deny).
var (
	// ErrTooManyCalls: MaxPendingCalls requests already await replies on this
	// connection. No id was used and nothing was sent.
	ErrTooManyCalls = errors.New("jsonrpc: too many server requests in flight")
	// ErrDropped: a best-effort notification found its reserve spent and was dropped.
	ErrDropped = errors.New("jsonrpc: best-effort notification dropped")
	// ErrNoClient: a ClientLink has no connection attached.
	ErrNoClient = errors.New("jsonrpc: no client connection attached")
)

// ClientCaller is the client-facing half of a connection that lower layers (the network
// proxy) are handed: server→client requests and best-effort notifications. *Conn and
// *ClientLink implement it. Both methods are safe for concurrent use.
type ClientCaller interface {
	// Call sends a request to the client and waits for its reply; see Conn.Call.
	Call(ctx context.Context, method string, params any) (json.RawMessage, error)
	// NotifyBestEffort queues a notification without waiting; see Conn.NotifyBestEffort.
	NotifyBestEffort(method string, params any) error
}

var (
	_ ClientCaller = (*Conn)(nil)
	_ ClientCaller = (*ClientLink)(nil)
)

// callResult is the outcome handed to a waiting Call: the raw result, or the client's
// error, or ErrConnClosed.
type callResult struct {
	result json.RawMessage
	err    error
}

// calls is a connection's server→client request state.
//
// mu guards every field: the read loop (route), Call and abort race on the pending map;
// it is held only for map and counter updates, never across a channel send that can
// block (each pending channel has room for its one result) or a queue operation.
type calls struct {
	mu      sync.Mutex
	lastID  int64                     // last id issued; ids start at 1
	pending map[int64]chan callResult // cap-1 channels, one per waiting Call
	closed  bool                      // the read loop ended: no reply can arrive
	stats   CallStats                 // InFlight is len(pending), filled by Stats
}

// CallStats counts one connection's server→client traffic, for tests and metrics.
type CallStats struct {
	// InFlight is the number of calls awaiting a reply (at most MaxPendingCalls).
	InFlight int
	// Issued is the number of ids used (the last id).
	Issued int64
	// Rejected counts calls refused with ErrTooManyCalls.
	Rejected uint64
	// Late counts replies to issued ids with no call waiting (ignored).
	Late uint64
	// Dropped counts best-effort notifications dropped for want of reserve.
	Dropped uint64
}

// CallStats returns a snapshot of the connection's call counters. Safe for concurrent
// use.
func (c *Conn) CallStats() CallStats {
	c.calls.mu.Lock()
	defer c.calls.mu.Unlock()
	s := c.calls.stats
	s.InFlight = len(c.calls.pending)
	s.Issued = c.calls.lastID
	return s
}

// Call sends a request to the client and returns its result, raw (aliasing nothing:
// the caller owns it). A JSON-RPC error reply is returned as a *jsonwire.Error. Other
// errors: ErrTooManyCalls at once when MaxPendingCalls calls are waiting; ErrConnClosed
// when the connection ends before a reply (a session resumed on a new connection does
// not inherit the call: it is never re-sent); ctx's error (wrapped) when ctx ends first,
// after which a late reply is ignored. params is encoded as for Notify before Call
// returns or waits. Call blocks while the outbound queue is full (back-pressure, as
// Notify), so put the whole budget, queueing included, in ctx. Safe for concurrent use.
func (c *Conn) Call(ctx context.Context, method string, params any) (json.RawMessage, error) {
	select {
	case <-c.done:
		return nil, ErrConnClosed
	default:
	}
	if err := context.Cause(ctx); err != nil { // push would still send into free space
		return nil, fmt.Errorf("sending %s request: %w", method, err)
	}
	p, err := appendValue(nil, params)
	if err != nil {
		return nil, fmt.Errorf("encoding %s request: %w", method, err)
	}
	id, ch, err := c.calls.start()
	if err != nil {
		if errors.Is(err, ErrTooManyCalls) {
			c.opts.Logger.Debug("server request refused", "component", "jsonrpc", "method", method, "err", err)
			if o, ok := c.opts.Observer.(CallObserver); ok {
				o.CallRefused()
			}
		}
		return nil, err
	}
	if err := c.push(ctx, encodeRequest(id, method, p)); err != nil {
		c.calls.forget(id)
		return nil, fmt.Errorf("sending %s request: %w", method, err)
	}
	select {
	case r := <-ch:
		return r.result, r.err
	case <-ctx.Done():
		if !c.calls.forget(id) {
			r := <-ch // route or abort took the entry first: its result is there
			return r.result, r.err
		}
		return nil, fmt.Errorf("waiting for %s reply: %w", method, context.Cause(ctx))
	}
}

// NotifyBestEffort queues a notification only if the outbound queue keeps
// BestEffortReserve slots and BestEffortReserveBytes bytes free for replies and process
// notifications afterwards; otherwise it drops it and returns ErrDropped (counted in
// CallStats.Dropped). It never waits. After shutdown began it returns ErrConnClosed.
// params is encoded before it returns. Safe for concurrent use.
func (c *Conn) NotifyBestEffort(method string, params any) error {
	b, err := c.notification(method, params)
	if err != nil {
		return err
	}
	c.qmu.Lock()
	if len(c.out)+1 > OutboundQueue-BestEffortReserve || c.queued+len(b) > OutboundBytes-BestEffortReserveBytes {
		c.qmu.Unlock()
		c.calls.mu.Lock()
		c.calls.stats.Dropped++
		c.calls.mu.Unlock()
		if o, ok := c.opts.Observer.(CallObserver); ok {
			o.BestEffortDropped()
		}
		return ErrDropped
	}
	c.queued += len(b)
	c.out = append(c.out, b)
	c.qmu.Unlock()
	wake(c.pending)
	return nil
}

// start registers the next call. It fails with ErrConnClosed once the read loop ended
// and with ErrTooManyCalls at the cap, in both cases without using an id.
func (cs *calls) start() (int64, chan callResult, error) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.closed {
		return 0, nil, ErrConnClosed
	}
	if len(cs.pending) >= MaxPendingCalls {
		cs.stats.Rejected++
		return 0, nil, ErrTooManyCalls
	}
	if cs.pending == nil {
		cs.pending = make(map[int64]chan callResult)
	}
	cs.lastID++
	ch := make(chan callResult, 1)
	cs.pending[cs.lastID] = ch
	return cs.lastID, ch, nil
}

// forget removes a call its caller gave up on. It reports false when the entry was
// already taken by route or abort (whose result is then in the channel).
func (cs *calls) forget(id int64) bool {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if _, ok := cs.pending[id]; !ok {
		return false
	}
	delete(cs.pending, id)
	return true
}

// route hands a reply to its call. It reports false when the reply's id was never
// issued on this connection: the caller then closes the connection (the reference's
// rule, see the file comment).
func (cs *calls) route(m *Message) bool {
	id, ok := issuedID(m.ID)
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if !ok || id > cs.lastID {
		return false
	}
	ch, pending := cs.pending[id]
	if !pending {
		cs.stats.Late++
		return true
	}
	delete(cs.pending, id)
	r := callResult{result: append(json.RawMessage(nil), m.Result...)} // m aliases the read buffer
	if m.Kind == KindError {
		r = callResult{err: m.Error}
	}
	ch <- r // cap 1, and only the entry's owner of the moment sends
	return true
}

// abort fails every pending call with ErrConnClosed and refuses new ones: the read loop
// ended, so no reply can arrive.
func (cs *calls) abort() {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	cs.closed = true
	for id, ch := range cs.pending {
		delete(cs.pending, id)
		ch <- callResult{err: ErrConnClosed}
	}
}

// issuedID returns a reply id as an integer ≥ 1, the only ids Call issues. A string id
// never matches, even "1" (the reference compares typed ids).
func issuedID(id ID) (int64, bool) {
	if len(id.raw) == 0 || id.raw[0] == '"' {
		return 0, false
	}
	n, err := strconv.ParseInt(string(id.raw), 10, 64)
	if err != nil || n < 1 {
		return 0, false
	}
	return n, true
}

// encodeRequest builds a server→client request around already encoded params.
func encodeRequest(id int64, method string, params []byte) []byte {
	b := make([]byte, 0, len(params)+len(method)+40)
	b = append(b, `{"id":`...)
	b = strconv.AppendInt(b, id, 10)
	b = append(b, `,"method":`...)
	b = appendJSONString(b, method)
	b = append(b, `,"params":`...)
	b = append(b, params...)
	return append(b, '}')
}

// ClientLink is a ClientCaller that follows a session from connection to connection:
// the executor attaches the connection a session is served on and detaches it when the
// connection goes, so a long-lived caller (a process's network proxy) always reaches the
// current client. With none attached, Call and NotifyBestEffort fail with ErrNoClient.
// A call in flight stays with the connection it was sent on (see Conn.Call). The zero
// value is ready; all methods are safe for concurrent use.
type ClientLink struct {
	mu   sync.Mutex // guards conn; held only to read or swap it
	conn *Conn
}

// Attach makes c the current connection (nil detaches).
func (l *ClientLink) Attach(c *Conn) {
	l.mu.Lock()
	l.conn = c
	l.mu.Unlock()
}

// Detach detaches c if it is still the current connection.
func (l *ClientLink) Detach(c *Conn) {
	l.mu.Lock()
	if l.conn == c {
		l.conn = nil
	}
	l.mu.Unlock()
}

func (l *ClientLink) current() *Conn {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.conn
}

// Call implements ClientCaller on the current connection.
func (l *ClientLink) Call(ctx context.Context, method string, params any) (json.RawMessage, error) {
	c := l.current()
	if c == nil {
		return nil, ErrNoClient
	}
	return c.Call(ctx, method, params)
}

// NotifyBestEffort implements ClientCaller on the current connection.
func (l *ClientLink) NotifyBestEffort(method string, params any) error {
	c := l.current()
	if c == nil {
		return ErrNoClient
	}
	return c.NotifyBestEffort(method, params)
}
