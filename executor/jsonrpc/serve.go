package jsonrpc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/execlab/executor/jsonwire"
)

// Lane says how a request is scheduled (spec/jsonrpc.md §1.6).
type Lane uint8

const (
	// LaneSerial runs the request alone: after every earlier request has finished and
	// before any later one starts. It is the only lane in the default mode.
	LaneSerial Lane = iota
	// LaneControl runs on the control lane when concurrency is enabled.
	LaneControl
	// LaneOrdinary runs on the ordinary lane when concurrency is enabled.
	LaneOrdinary
)

// ErrClose, returned by a Handler, ends the connection without a reply (spec/jsonrpc.md
// §1.4: unexpected notifications; §2.4: a connection whose session was taken over).
var ErrClose = errors.New("jsonrpc: close connection")

// Handler serves the requests and notifications of one connection. The connection calls
// Lane from its dispatch goroutine in arrival order, and Handle/HandleNotification either
// there (serial work, notifications) or in per-request goroutines (lanes).
type Handler interface {
	// Lane classifies a request. It is called in arrival order, after every earlier
	// serial request and notification has been handled.
	Lane(method string) Lane
	// Handle answers a request with a result (marshalled as JSON; nil means {}) or an
	// error (*jsonwire.Error keeps its code; any other error is sent as jsonwire.CodeInternal).
	Handle(ctx context.Context, req *Message) (any, error)
	// HandleNotification handles a client notification. ErrClose (or any error) ends
	// the connection without a reply.
	HandleNotification(ctx context.Context, n *Message) error
}

// InlineHandler is implemented by a Handler that takes some notifications on the read
// loop, before the dispatch queue, so that they are never held behind a blocked request
// (flow-control acknowledgements, docs/reliability.md). HandleInline must not block; it
// reports whether it took the notification (false: it is dispatched as usual).
type InlineHandler interface {
	HandleInline(n *Message) bool
}

// MessageReleaser is implemented by a MessageConn whose ReadMessage may hand out its own
// read buffers (internal/wsmsg does for large messages): ReleaseMessage gives one back for
// reuse once nothing refers to it. A buffer never given back is simply collected.
type MessageReleaser interface {
	ReleaseMessage(data []byte)
}

// ReleasingHandler is implemented by a Handler whose requests of some methods keep
// nothing of the request message (params, id, method text) once Handle has returned:
// for those the connection gives the message's bytes back to a MessageReleaser after the
// reply is encoded, so a stream of large requests (fs/writeBlock) reuses one read buffer
// instead of copying each message out of it.
type ReleasingHandler interface {
	ReleasesMessage(method string) bool
}

// Options configures a connection. Nil means defaults; it is never mutated.
type Options struct {
	// ConcurrentRequests ≤ 1 means strictly serial handling (default). N ≥ 2 enables
	// the control and ordinary lanes with N permits each.
	ConcurrentRequests int
	// ParseErrorPrefix is put before the decoder detail of a malformed message, e.g.
	// "failed to parse websocket JSON-RPC message from exec-server websocket 127.0.0.1:5".
	ParseErrorPrefix string
	// Logger receives debug logs; nil discards them.
	Logger *slog.Logger
	// Observer receives back-pressure events (metrics.go), and drop and refusal counts
	// of the server→client path when it is also a CallObserver. Nil means none.
	Observer Observer
}

func (o *Options) withDefaults() Options {
	var c Options
	if o != nil {
		c = *o
	}
	if c.ParseErrorPrefix == "" {
		c.ParseErrorPrefix = "failed to parse JSON-RPC message"
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Observer == nil {
		c.Observer = nopObserver{}
	}
	return c
}

// Conn runs the JSON-RPC protocol over one MessageConn. Create it with NewConn, then
// call Run once. Notify is safe for concurrent use.
type Conn struct {
	mc   MessageConn
	opts Options

	done chan struct{} // closed when Run starts shutting down

	// qmu guards out and queued. out is the outbound queue, oldest first: at most
	// OutboundQueue messages, enqueuers block when full; nil while empty, so an idle
	// connection holds no queue array. queued is the encoded bytes in out plus the one
	// being written: enqueuers wait (on space) while it is over OutboundBytes, so a fast
	// producer of large messages (1 MiB body deltas, big reads) cannot pin 128 of them
	// in memory.
	qmu     sync.Mutex
	out     [][]byte
	queued  int
	space   chan struct{} // capacity 1; signalled by the writer after each message
	pending chan struct{} // capacity 1; signalled by push after each message queued

	// imu guards inQueued: the raw bytes of messages read but not yet taken by the
	// dispatcher. The read loop waits (on inSpace) while it is over InboundBytes, so a
	// peer that outruns the handlers holds back its own socket, not our memory.
	imu      sync.Mutex
	inQueued int
	inSpace  chan struct{} // capacity 1; signalled by the dispatcher after each message

	// calls holds the server→client requests awaiting replies (call.go); its own lock.
	calls calls

	closeOnce sync.Once
}

// NewConn returns a connection over mc. It starts nothing.
func NewConn(mc MessageConn, opts *Options) *Conn {
	return &Conn{
		mc:      mc,
		opts:    opts.withDefaults(),
		done:    make(chan struct{}),
		space:   make(chan struct{}, 1),
		pending: make(chan struct{}, 1),

		inSpace: make(chan struct{}, 1),
	}
}

// Run reads, dispatches and writes until the peer disconnects, ctx is done, or a handler
// returns ErrClose. It returns after every goroutine it started has exited; in-flight
// handlers see their ctx cancelled. Replies still queued when the read side ends are
// dropped (spec/jsonrpc.md §1.1: an unanswered request at EOF gets no reply).
func (c *Conn) Run(ctx context.Context, h Handler) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)

	inbound := make(chan *Message, InboundQueue)
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // writeLoop
		defer wg.Done()
		c.writeLoop(ctx, cancel)
	}()
	go func() { // readLoop
		defer wg.Done()
		defer close(inbound)
		defer c.calls.abort() // no reply can arrive after the read loop: fail pending calls
		c.readLoop(ctx, cancel, h, inbound)
	}()
	c.dispatchLoop(ctx, cancel, h, inbound)
	c.shutdown()
	cancel(errConnDone)
	_ = c.mc.Close()
	wg.Wait()
	err := context.Cause(ctx)
	if errors.Is(err, errConnDone) || errors.Is(err, ErrClose) || errors.Is(err, errPeerGone) {
		return nil
	}
	return err
}

var (
	errConnDone = errors.New("jsonrpc: connection finished")
	errPeerGone = errors.New("jsonrpc: peer disconnected")
)

func (c *Conn) shutdown() { c.closeOnce.Do(func() { close(c.done) }) }

// Done is closed once the connection has begun shutting down.
func (c *Conn) Done() <-chan struct{} { return c.done }

func (c *Conn) readLoop(ctx context.Context, cancel context.CancelCauseFunc, h Handler, inbound chan<- *Message) {
	inline, _ := h.(InlineHandler)
	var releaser MessageReleaser
	if rh, ok := h.(ReleasingHandler); ok && rh != nil {
		releaser, _ = c.mc.(MessageReleaser)
	}
	ar, arrival := c.arrivalFor(h)
	for {
		in, err := c.readMessage(ctx, ar, arrival)
		if err != nil {
			cancel(errPeerGone)
			return
		}
		data := in.data
		msg, err := parseKnown(data, in.known)
		if err != nil {
			e := &jsonwire.Error{Code: jsonwire.CodeInvalidRequest, Message: c.opts.ParseErrorPrefix + ": " + err.Error()}
			if !c.enqueue(ctx, encodeError(nil, IntID(-1), e)) {
				return
			}
			continue
		}
		if msg.Kind == KindResponse || msg.Kind == KindError {
			// Replies are routed here, never queued behind a request. One to an id this
			// connection never issued closes it (call.go), as every reply did before
			// the server sent requests of its own.
			if !c.calls.route(msg) {
				cancel(ErrClose)
				return
			}
			continue
		}
		if inline != nil && msg.Kind == KindNotification && inline.HandleInline(msg) {
			continue
		}
		msg.size = len(data) + in.held
		msg.Early = in.early
		if releaser != nil {
			msg.raw = data
		}
		if !c.admitInbound(ctx, msg.size) {
			return
		}
		select {
		case inbound <- msg:
		case <-ctx.Done():
			return
		}
	}
}

// admitInbound charges n bytes to the inbound budget, waiting while it is spent (a
// message is always admitted into an empty queue). It reports false when ctx ends.
func (c *Conn) admitInbound(ctx context.Context, n int) bool {
	var waited time.Time // set at the first wait
	for {
		c.imu.Lock()
		if c.inQueued == 0 || c.inQueued+n <= InboundBytes {
			c.inQueued += n
			c.imu.Unlock()
			if !waited.IsZero() {
				c.opts.Observer.Backpressure(QueueInbound, time.Since(waited))
			}
			return true
		}
		c.imu.Unlock()
		if waited.IsZero() {
			waited = time.Now()
		}
		select {
		case <-c.inSpace:
		case <-ctx.Done():
			return false
		}
	}
}

// releaseInbound returns a dequeued message's bytes to the inbound budget.
func (c *Conn) releaseInbound(n int) {
	c.imu.Lock()
	c.inQueued -= n
	c.imu.Unlock()
	wake(c.inSpace)
}

func (c *Conn) writeLoop(ctx context.Context, cancel context.CancelCauseFunc) {
	for {
		c.qmu.Lock()
		var b []byte
		if len(c.out) > 0 {
			b = c.out[0]
			c.out[0] = nil
			c.out = c.out[1:]
			if len(c.out) == 0 {
				c.out = nil // an idle connection holds no queue array
			}
		}
		c.qmu.Unlock()
		if b == nil {
			select {
			case <-c.pending:
				continue
			case <-ctx.Done():
				return
			}
		}
		if ctx.Err() != nil {
			return
		}
		err := c.mc.WriteMessage(ctx, b)
		c.release(len(b))
		putBuffer(b) // WriteMessage keeps no reference (MessageConn)
		if err != nil {
			cancel(errPeerGone)
			return
		}
	}
}

// dispatchLoop owns request ordering: serial requests and notifications run inline in
// arrival order; lane requests run in goroutines bounded by the lane's permits.
func (c *Conn) dispatchLoop(ctx context.Context, cancel context.CancelCauseFunc, h Handler, inbound <-chan *Message) {
	var inflight sync.WaitGroup
	defer inflight.Wait()
	n := c.opts.ConcurrentRequests
	var control, ordinary chan struct{}
	if n >= 2 {
		control, ordinary = make(chan struct{}, n), make(chan struct{}, n)
	}
	for {
		var msg *Message
		select {
		case m, ok := <-inbound:
			if !ok {
				return
			}
			msg = m
			c.releaseInbound(msg.size)
		case <-ctx.Done():
			return
		}
		if msg.Kind == KindNotification {
			if err := h.HandleNotification(ctx, msg); err != nil {
				cancel(ErrClose)
				return
			}
			continue
		}
		lane := LaneSerial
		if control != nil {
			lane = h.Lane(msg.Method)
		}
		var permits chan struct{}
		switch lane {
		case LaneControl:
			permits = control
		case LaneOrdinary:
			permits = ordinary
		default:
			inflight.Wait()
			if !c.handle(ctx, cancel, h, msg) {
				return
			}
			continue
		}
		select {
		case permits <- struct{}{}:
		case <-ctx.Done():
			return
		}
		inflight.Add(1)
		go func() {
			defer inflight.Done()
			defer func() { <-permits }()
			c.handle(ctx, cancel, h, msg)
		}()
	}
}

// handle runs one request and queues its reply. It reports false once the connection is
// ending.
func (c *Conn) handle(ctx context.Context, cancel context.CancelCauseFunc, h Handler, msg *Message) bool {
	result, err := h.Handle(ctx, msg)
	if errors.Is(err, ErrClose) {
		cancel(ErrClose)
		return false
	}
	if ctx.Err() != nil {
		return false
	}
	var then func()
	if t, ok := result.(*thenResult); ok {
		result, then = t.result, t.then
	}
	var b []byte
	if err != nil {
		var rpcErr *jsonwire.Error
		if !errors.As(err, &rpcErr) {
			rpcErr = &jsonwire.Error{Code: jsonwire.CodeInternal, Message: err.Error()}
		}
		b = encodeError(nil, msg.ID, rpcErr)
	} else {
		b, err = encodeResult(msg.ID, result)
		if err != nil {
			b = encodeError(nil, msg.ID, &jsonwire.Error{Code: jsonwire.CodeInternal, Message: fmt.Sprintf("serializing response: %v", err)})
			then = nil
		}
	}
	if msg.raw != nil && h.(ReleasingHandler).ReleasesMessage(msg.Method) {
		// b holds its own copy of the id: nothing refers to the message's bytes any more.
		c.mc.(MessageReleaser).ReleaseMessage(msg.raw)
		msg.raw = nil
	}
	if !c.enqueue(ctx, b) {
		return false
	}
	if then != nil {
		then()
	}
	return true
}

func (c *Conn) enqueue(ctx context.Context, b []byte) bool {
	return c.push(ctx, b) == nil
}

// push queues b, first waiting for byte budget (OutboundBytes; a message is always
// admitted into an empty queue, however large) and then for a slot in out.
func (c *Conn) push(ctx context.Context, b []byte) error {
	select {
	case <-c.done:
		return ErrConnClosed
	default:
	}
	var waited time.Time // set at the first wait
	for {
		c.qmu.Lock()
		if len(c.out) < OutboundQueue && (c.queued == 0 || c.queued+len(b) <= OutboundBytes) {
			c.queued += len(b)
			c.out = append(c.out, b)
			c.qmu.Unlock()
			if !waited.IsZero() {
				c.opts.Observer.Backpressure(QueueOutbound, time.Since(waited))
			}
			wake(c.pending)
			return nil
		}
		c.qmu.Unlock()
		if waited.IsZero() {
			waited = time.Now()
		}
		select {
		case <-c.space:
		case <-ctx.Done():
			return ctx.Err()
		case <-c.done:
			return ErrConnClosed
		}
	}
}

// release returns n bytes of budget and wakes one waiting enqueuer.
func (c *Conn) release(n int) {
	c.qmu.Lock()
	c.queued -= n
	c.qmu.Unlock()
	wake(c.space)
}

// Notify queues a notification, blocking while the outbound queue is full. It fails once
// the connection is shutting down or ctx is done.
func (c *Conn) Notify(ctx context.Context, method string, params any) error {
	b, err := c.notification(method, params)
	if err != nil {
		return err
	}
	return c.push(ctx, b)
}

// notification encodes a notification for Notify and NotifyBestEffort; once the
// connection has begun shutting down it fails with ErrConnClosed.
func (c *Conn) notification(method string, params any) ([]byte, error) {
	select {
	case <-c.done:
		return nil, ErrConnClosed
	default:
	}
	b, err := encodeNotification(method, params)
	if err != nil {
		return nil, fmt.Errorf("encoding %s notification: %w", method, err)
	}
	return b, nil
}

// wake signals ch (capacity 1) without blocking: a waiter already signalled stays so.
func wake(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// ErrConnClosed is returned by Notify after the connection has begun shutting down.
var ErrConnClosed = errors.New("jsonrpc: connection closed")

func encodeError(b []byte, id ID, e *jsonwire.Error) []byte {
	b = append(b, `{"id":`...)
	b = append(b, id.raw...)
	b = append(b, `,"error":{"code":`...)
	b = fmt.Appendf(b, "%d", e.Code)
	if len(e.Data) > 0 {
		b = append(b, `,"data":`...)
		b = append(b, e.Data...)
	}
	b = append(b, `,"message":`...)
	b = appendJSONString(b, e.Message)
	return append(b, "}}"...)
}

func encodeResult(id ID, result any) ([]byte, error) {
	b := append(getBuffer(sizeHint(result)), `{"id":`...)
	b = append(b, id.raw...)
	b = append(b, `,"result":`...)
	b, err := appendValue(b, result)
	if err != nil {
		return nil, err
	}
	return append(b, '}'), nil
}

func encodeNotification(method string, params any) ([]byte, error) {
	b := append(getBuffer(sizeHint(params)), `{"method":`...)
	b = appendJSONString(b, method)
	b = append(b, `,"params":`...)
	b, err := appendValue(b, params)
	if err != nil {
		return nil, err
	}
	return append(b, '}'), nil
}

// appendValue appends v's JSON: AppendJSONer first, nil as {}, else encoding/json
// without HTML escaping (the reference's serde output does not escape <, >, &).
func appendValue(b []byte, v any) ([]byte, error) {
	switch x := v.(type) {
	case nil:
		return append(b, "{}"...), nil
	case AppendJSONer:
		return x.AppendJSON(b), nil
	case json.RawMessage:
		if len(x) == 0 {
			return append(b, "{}"...), nil
		}
		return append(b, x...), nil
	}
	buf := bytes.NewBuffer(b)
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	out := buf.Bytes()
	out = out[:len(out)-1] // drop Encode's trailing newline
	if cap(out) > 2*len(out)+4096 {
		out = bytes.Clone(out) // the buffer's doubling would otherwise stay queued with it
	}
	return out, nil
}

func appendJSONString(b []byte, s string) []byte {
	if plainASCII(s) { // method names: no escaping, no encoder
		b = append(b, '"')
		b = append(b, s...)
		return append(b, '"')
	}
	buf := bytes.NewBuffer(b)
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	out := buf.Bytes()
	return out[:len(out)-1]
}

// plainASCII reports whether s is printable ASCII without '"' or '\\', which JSON (and
// serde_json) writes between quotes unchanged.
func plainASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}
