package executor

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/execlab/executor/executor/jsonrpc"
	"github.com/execlab/executor/executor/protocol"
	"github.com/execlab/executor/executor/session"
	"github.com/execlab/executor/jsonwire"
)

// conn is the per-connection jsonrpc.Handler: handshake state, the attached session and
// connection-owned resources.
type conn struct {
	srv *Server
	rpc *jsonrpc.Conn
	// flowControlled is ConnInfo.FlowControlled: the session attaches with
	// process.Manager.AttachFlowControlled.
	flowControlled bool
	// onSandboxedNetworkStart is ConnInfo.OnSandboxedNetworkStart (may be nil).
	onSandboxedNetworkStart func()

	// mu guards the handshake fields and sess. Never held across calls into other
	// packages.
	mu          sync.Mutex
	initDone    bool // initialize succeeded on this connection
	initialized bool // the initialized notification arrived after it
	sess        *session.Session[*sessionState]

	res *connResources // fs handles, HTTP streams; closed with the connection
}

func newConn(s *Server, rpc *jsonrpc.Conn, info ConnInfo) *conn {
	c := &conn{srv: s, rpc: rpc, flowControlled: info.FlowControlled, onSandboxedNetworkStart: info.OnSandboxedNetworkStart}
	c.res = newConnResources(s, rpc)
	return c
}

// close releases connection-owned resources and detaches the session at once
// (spec/jsonrpc.md §2.4).
func (c *conn) close() {
	c.res.close()
	c.mu.Lock()
	sess := c.sess
	c.mu.Unlock()
	if sess != nil {
		c.srv.sessions.Detach(sess, c)
		if !c.srv.sessions.AttachedTo(sess, c) {
			sess.State.detach(c)
		}
	}
}

func (c *conn) session() *session.Session[*sessionState] {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.sess
}

// ReleasesMessage implements jsonrpc.ReleasingHandler: fs/writeBlock keeps nothing of its
// request once answered (the chunk is decoded into pooled storage, written and released;
// the handle id is a copy), so the transport may reuse the request's bytes (writeblock_local,
// docs/bench.md).
func (c *conn) ReleasesMessage(method string) bool { return method == protocol.MethodFsWriteBlock }

// Arrival implements jsonrpc.EarlyDecoder: fs/writeBlock chunks are decoded while their
// request arrives (protocol.WriteBlockArrival; writeblock_local, docs/bench.md), and
// taken by the params through protocol.WithEarly in bind.
func (c *conn) Arrival() jsonrpc.Arrival { return new(protocol.WriteBlockArrival) }

// Lane implements jsonrpc.Handler: before initialized everything is serial.
func (c *conn) Lane(method string) jsonrpc.Lane {
	c.mu.Lock()
	ready := c.initialized
	c.mu.Unlock()
	m, ok := methods[method]
	if !ok || !ready {
		return jsonrpc.LaneSerial
	}
	return m.lane
}

// Handle implements jsonrpc.Handler: route, timed for the Observer (and traced when it
// implements RequestSpan).
func (c *conn) Handle(ctx context.Context, req *jsonrpc.Message) (any, error) {
	obs := c.srv.opts.Observer
	method := methodLabel(req.Method)
	var end func(code string)
	if rs, ok := obs.(RequestSpan); ok {
		ctx, end = rs.StartRequest(ctx, method)
	}
	start := time.Now()
	res, err := c.route(ctx, req)
	code := codeLabel(err)
	obs.RequestHandled(method, code, time.Since(start))
	if end != nil {
		end(code)
	}
	return res, err
}

// route serves one request in the reference's order (spec/jsonrpc.md §1.4): route lookup,
// params decoding, then the handshake checks.
func (c *conn) route(ctx context.Context, req *jsonrpc.Message) (any, error) {
	m, ok := methods[req.Method]
	if !ok {
		return nil, jsonrpc.MethodNotFound(req.Method)
	}
	if sess := c.session(); sess != nil && !c.srv.sessions.AttachedTo(sess, c) {
		return nil, jsonrpc.ErrClose
	}
	call, err := m.prepare(req)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	initDone, initialized := c.initDone, c.initialized
	c.mu.Unlock()
	if req.Method == "initialize" {
		if initDone {
			return nil, jsonwire.InvalidRequest("initialize may only be sent once per connection")
		}
	} else if !initDone {
		return nil, jsonwire.InvalidRequest("client must call initialize before using %s methods", m.family)
	} else if !initialized {
		return nil, jsonwire.InvalidRequest("client must send initialized before using %s methods", m.family)
	}
	return call(ctx, c)
}

// HandleNotification implements jsonrpc.Handler: only initialized is allowed, and only
// after a successful initialize; a repeated one is ignored.
func (c *conn) HandleNotification(_ context.Context, n *jsonrpc.Message) error {
	if n.Method != "initialized" {
		return jsonrpc.ErrClose
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.initDone {
		return jsonrpc.ErrClose
	}
	c.initialized = true
	return nil
}

// HandleInline implements jsonrpc.InlineHandler: process/ack (docs/reliability.md) is
// applied on the read loop, so a request blocked in the dispatcher (a process/write
// waiting for a child that waits for the window) cannot hold back the ack that opens
// the window. Before initialize, or with params that do not decode, it is left to
// HandleNotification, which closes the connection as for any unexpected notification.
func (c *conn) HandleInline(n *jsonrpc.Message) bool {
	if strings.HasPrefix(n.Method, "tunnel/") { // port tunnels; before initialize: as above
		return c.session() != nil && c.res.tunnels.HandleNotification(n.Method, n.Params)
	}
	if n.Method != protocol.MethodProcessAck {
		return false
	}
	c.mu.Lock()
	sess := c.sess
	c.mu.Unlock()
	if sess == nil {
		return false
	}
	var p protocol.ProcessAckParams
	if err := jsonwire.UnmarshalParams(n.Params, &p); err != nil {
		return false
	}
	sess.State.procs.Ack(&p)
	return true
}

// method describes one registered request method.
type method struct {
	family string       // for handshake-order messages, e.g. "exec"
	lane   jsonrpc.Lane // in concurrent mode
	// prepare decodes req's params (errors are -32602) and returns the call to run once
	// the handshake checks pass.
	prepare func(req *jsonrpc.Message) (func(ctx context.Context, c *conn) (any, error), error)
}

// bind builds a method whose params decode into P.
func bind[P any](family string, lane jsonrpc.Lane, fn func(ctx context.Context, c *conn, p *P) (any, error)) method {
	return method{
		family: family,
		lane:   lane,
		prepare: func(req *jsonrpc.Message) (func(context.Context, *conn) (any, error), error) {
			p := new(P)
			if err := protocol.WithEarly(req.Early, func() error { return unmarshalRequestParams(req, p) }); err != nil {
				return nil, err
			}
			return func(ctx context.Context, c *conn) (any, error) { return fn(ctx, c, p) }, nil
		},
	}
}

// unmarshalRequestParams decodes req's params into v, without validating again what
// jsonrpc.Parse checked, and without searching again for the end of a string the
// connection's Arrival checked.
func unmarshalRequestParams(req *jsonrpc.Message, v any) error {
	if req.ParamsChecked() {
		return jsonwire.UnmarshalCheckedParamsKnown(req.Params, v, req.ParamsKnown())
	}
	return jsonwire.UnmarshalParams(req.Params, v)
}

// bindUnit builds a method with unit params: absent, null and {} are accepted.
func bindUnit(family string, lane jsonrpc.Lane, fn func(ctx context.Context, c *conn) (any, error)) method {
	return method{
		family: family,
		lane:   lane,
		prepare: func(req *jsonrpc.Message) (func(context.Context, *conn) (any, error), error) {
			if err := unmarshalRequestParams(req, &jsonwire.Unit{}); err != nil {
				return nil, err
			}
			return fn, nil
		},
	}
}
