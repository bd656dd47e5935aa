package tunnel

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"

	"github.com/execlab/executor/executor/protocol"
	"github.com/execlab/executor/jsonwire"
)

// Notifier sends notifications to the client (jsonrpc.Conn's Notify, which blocks while
// the outbound queue is full and fails once the connection is gone).
type Notifier interface {
	Notify(ctx context.Context, method string, params any) error
}

// Observer counts tunnel opens for metrics, by status ("opened", "refused", "failed",
// "connIdInUse"). Implementations must be safe for concurrent use and must not block.
type Observer interface {
	TunnelOpened(status string)
}

// Options configures a Table. Nil means defaults; it is never mutated.
type Options struct {
	// Policy says which destinations may be reached. Nil: DefaultPolicy (loopback).
	Policy *Policy
	// Window is this side's receive window per connection in bytes. Default
	// DefaultWindow.
	Window int
	// Logger receives one line per open (destination, never payload). Nil discards.
	Logger *slog.Logger
	// Observer counts opens. Nil: none.
	Observer Observer
	// Dial dials a destination. Nil: net.Dialer with DialTimeout.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// Resolver resolves host names for the policy. Nil: net.DefaultResolver.
	Resolver Resolver
	// ListenPolicy says which addresses tunnel/listen may bind. Nil:
	// DefaultListenPolicy (loopback).
	ListenPolicy *Policy
	// Listen binds a listener. Nil: net.ListenConfig.
	Listen func(ctx context.Context, network, addr string) (net.Listener, error)
}

type nopObserver struct{}

func (nopObserver) TunnelOpened(string) {}

func (o *Options) withDefaults() Options {
	var c Options
	if o != nil {
		c = *o
	}
	if c.Policy == nil {
		c.Policy = DefaultPolicy()
	}
	if c.Window <= 0 {
		c.Window = DefaultWindow
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Observer == nil {
		c.Observer = nopObserver{}
	}
	if c.Dial == nil {
		d := &net.Dialer{Timeout: DialTimeout}
		c.Dial = d.DialContext
	}
	if c.Resolver == nil {
		c.Resolver = net.DefaultResolver
	}
	if c.ListenPolicy == nil {
		c.ListenPolicy = DefaultListenPolicy()
	}
	if c.Listen == nil {
		var lc net.ListenConfig
		c.Listen = lc.Listen
	}
	return c
}

// Table is the tunnels of one JSON-RPC connection. Create it with NewTable (which starts
// nothing); Close it when the connection ends.
type Table struct {
	n    Notifier
	opts Options
	// life is the lifetime of every tunnel goroutine (the one ctx kept in a struct):
	// cancelled by Close, so a Notify blocked on a full queue returns.
	life   context.Context
	cancel context.CancelFunc

	// mu guards conns, listeners, nextAccepted and closed. Held briefly; never
	// while calling n or a socket.
	mu           sync.Mutex
	conns        map[uint64]*conn
	listeners    map[uint64]*listener // listen.go
	nextAccepted uint64               // next executor-chosen connId (≥ protocol.TunnelAcceptedIDBase)
	closed       bool
	wg           sync.WaitGroup // one count per running routineRead / routineWrite
}

// NewTable returns an empty table whose notifications go to n.
func NewTable(n Notifier, opts *Options) *Table {
	life, cancel := context.WithCancel(context.Background())
	return &Table{n: n, opts: opts.withDefaults(), life: life, cancel: cancel, conns: make(map[uint64]*conn),
		listeners: make(map[uint64]*listener)}
}

// Enabled reports whether the policy allows any destination (the tcpTunnel capability).
func (t *Table) Enabled() bool { return t.opts.Policy.Enabled() }

// Open serves tunnel/open: policy check, dial, register. On "opened" the returned start
// must be called once the result has been queued on the connection (jsonrpc.Then), so
// that the connection's first tunnel/data follows the result; start is nil otherwise.
func (t *Table) Open(ctx context.Context, p *protocol.TunnelOpenParams) (*protocol.TunnelOpenResult, func()) {
	res, start := t.open(ctx, p)
	t.opts.Observer.TunnelOpened(string(res.Status))
	return res, start
}

func (t *Table) open(ctx context.Context, p *protocol.TunnelOpenParams) (*protocol.TunnelOpenResult, func()) {
	log := t.opts.Logger.With("component", "tunnel", "conn_id", p.ConnID, "destination", net.JoinHostPort(p.Host, fmt.Sprint(p.Port)))
	t.mu.Lock()
	_, dup := t.conns[p.ConnID]
	full := len(t.conns) >= MaxConns
	closed := t.closed
	t.mu.Unlock()
	switch {
	case closed:
		return &protocol.TunnelOpenResult{Status: protocol.TunnelFailed, Message: "connection closing"}, nil
	case dup:
		return &protocol.TunnelOpenResult{Status: protocol.TunnelInUse, Message: "connId already open"}, nil
	case full:
		return &protocol.TunnelOpenResult{Status: protocol.TunnelFailed, Message: fmt.Sprintf("too many open tunnels on this connection (%d)", MaxConns)}, nil
	}
	nc, addr, status, msg := reach(ctx, t, t.opts.Policy, p.Host, p.Port, log, "tunnel", "dialing", t.opts.Dial)
	if status != "" {
		return &protocol.TunnelOpenResult{Status: status, Message: msg}, nil
	}
	c := newConn(t, p.ConnID, nc, int64(peerWindow(p.Window)), t.opts.Window)
	t.mu.Lock()
	if t.closed || t.conns[p.ConnID] != nil {
		t.mu.Unlock()
		_ = nc.Close()
		return &protocol.TunnelOpenResult{Status: protocol.TunnelInUse, Message: "connId already open"}, nil
	}
	t.conns[p.ConnID] = c
	t.mu.Unlock()
	log.Info("tunnel opened", "address", addr)
	return &protocol.TunnelOpenResult{Status: protocol.TunnelOpened, Window: uint64(t.opts.Window)}, func() {
		t.mu.Lock()
		if t.closed {
			t.mu.Unlock()
			c.reset("", false)
			return
		}
		t.wg.Add(2)
		t.mu.Unlock()
		go c.routineRead()
		go c.routineWrite()
	}
}

// reach resolves host:port under pol and connects to (dials, or binds) the address, for
// tunnel/open and tunnel/listen alike: the connection and its address, or the refused or
// failed status and its message. what starts the log lines ("tunnel", "tunnel listen");
// doing names connect in a failure's message ("dialing", "listening on").
func reach[C any](ctx context.Context, t *Table, pol *Policy, host string, port uint16, log *slog.Logger, what, doing string,
	connect func(ctx context.Context, network, addr string) (C, error)) (c C, addr string, status protocol.TunnelOpenStatus, msg string) {
	addr, err := pol.Resolve(ctx, t.opts.Resolver, host, port)
	if err != nil {
		var re *RefusedError
		if errors.As(err, &re) {
			log.Warn(what+" refused by policy", "policy", pol.String())
			return c, "", protocol.TunnelRefused, err.Error()
		}
		log.Info(what+" failed", "error", err.Error())
		return c, "", protocol.TunnelFailed, err.Error()
	}
	c, err = connect(ctx, "tcp", addr)
	if err != nil {
		log.Info(what+" failed", "error", err.Error())
		return c, "", protocol.TunnelFailed, fmt.Sprintf("%s %s: %v", doing, addr, unwrapOp(err))
	}
	return c, addr, "", ""
}

// peerWindow is the send credit a peer's requested window grants: DefaultWindow when
// absent (0), at most MaxWindow.
func peerWindow(w uint64) uint64 {
	if w == 0 {
		return DefaultWindow
	}
	return min(w, MaxWindow)
}

// unwrapOp drops net.OpError's repetition of the address.
func unwrapOp(err error) error {
	var op *net.OpError
	if errors.As(err, &op) && op.Err != nil {
		return op.Err
	}
	return err
}

// HandleNotification takes a tunnel/* notification from the read loop and reports
// whether it was one (false also for params that do not decode: the connection then
// treats it as an unexpected notification and closes). It never blocks. Ids that are not
// open are ignored: a notification may cross a close, or come from before a reconnect.
func (t *Table) HandleNotification(method string, params json.RawMessage) bool {
	switch method {
	case protocol.MethodTunnelData:
		var p protocol.TunnelDataParams
		if jsonwire.UnmarshalParams(params, &p) != nil {
			return false
		}
		if c := t.get(p.ConnID); c != nil {
			c.received(p.Data)
		}
	case protocol.MethodTunnelAck:
		var p protocol.TunnelAckParams
		if jsonwire.UnmarshalParams(params, &p) != nil {
			return false
		}
		if c := t.get(p.ConnID); c != nil {
			c.acked(p.Bytes)
		}
	case protocol.MethodTunnelEOF:
		var p protocol.TunnelEOFParams
		if jsonwire.UnmarshalParams(params, &p) != nil {
			return false
		}
		if c := t.get(p.ConnID); c != nil {
			c.peerEOF()
		}
	case protocol.MethodTunnelClose:
		var p protocol.TunnelCloseParams
		if jsonwire.UnmarshalParams(params, &p) != nil {
			return false
		}
		if c := t.get(p.ConnID); c != nil {
			c.reset("", false)
		}
	default:
		return false
	}
	return true
}

func (t *Table) get(id uint64) *conn {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.conns[id]
}

func (t *Table) remove(c *conn) {
	t.mu.Lock()
	if t.conns[c.id] == c {
		delete(t.conns, c.id)
	}
	t.mu.Unlock()
}

// Len reports the open tunnels.
func (t *Table) Len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.conns)
}

// Close closes every listener, resets every tunnel (sockets closed, nothing sent: the
// connection is gone) and returns after their goroutines have exited. Opens and listens
// after Close fail.
func (t *Table) Close() {
	t.mu.Lock()
	t.closed = true
	t.mu.Unlock()
	t.closeListeners()
	t.mu.Lock()
	conns := make([]*conn, 0, len(t.conns))
	for _, c := range t.conns {
		conns = append(conns, c)
	}
	t.mu.Unlock()
	t.cancel()
	for _, c := range conns {
		c.reset("", false)
	}
	t.wg.Wait()
}
