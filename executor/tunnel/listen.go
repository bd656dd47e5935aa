package tunnel

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"time"

	"github.com/execlab/executor/executor/protocol"
)

// Remote listeners (tunnel/listen, capability tcpTunnelListen): the executor binds a TCP
// socket on its host; each accepted connection becomes a tunnel with an executor-chosen
// connId (from protocol.TunnelAcceptedIDBase up), announced by tunnel/accepted and then
// carried by the same data path as tunnel/open's. Listeners belong to the Table (the
// JSON-RPC connection): Close closes them.

// ListenObserver counts listener events for metrics: "listening", "refused", "failed"
// (tunnel/listen outcomes) and "accepted" (one per accepted connection). Optional: an
// Options.Observer that implements it is used. Must not block.
type ListenObserver interface {
	TunnelListenEvent(event string)
}

// Listener events counted by ListenObserver.
const (
	ListenEventListening = "listening"
	ListenEventRefused   = "refused"
	ListenEventFailed    = "failed"
	ListenEventAccepted  = "accepted"
)

// MaxListeners bounds the listeners of one JSON-RPC connection.
const MaxListeners = 256

// acceptBackoffMax bounds the pause after a failing Accept (EMFILE and the like).
const acceptBackoffMax = time.Second

type listener struct {
	id     uint64
	ln     net.Listener
	window int64 // the client's receive window for accepted connections
	addr   string
	done   chan struct{} // closed by stop
}

// ListenEnabled reports whether the listen policy allows any bind (tcpTunnelListen).
func (t *Table) ListenEnabled() bool { return t.opts.ListenPolicy.Enabled() }

func (t *Table) listenEvent(ev string) {
	if o, ok := t.opts.Observer.(ListenObserver); ok {
		o.TunnelListenEvent(ev)
	}
}

// Listen serves tunnel/listen: policy check, bind, start accepting. On "listening" the
// returned start must be called once the result is queued (jsonrpc.Then), so that no
// tunnel/accepted precedes the result; start is nil otherwise.
func (t *Table) Listen(ctx context.Context, p *protocol.TunnelListenParams) (*protocol.TunnelListenResult, func()) {
	res, start := t.listen(ctx, p)
	switch res.Status {
	case protocol.TunnelListening:
		t.listenEvent(ListenEventListening)
	case protocol.TunnelRefused:
		t.listenEvent(ListenEventRefused)
	default:
		t.listenEvent(ListenEventFailed)
	}
	return res, start
}

func (t *Table) listen(ctx context.Context, p *protocol.TunnelListenParams) (*protocol.TunnelListenResult, func()) {
	bind := net.JoinHostPort(p.Host, strconv.Itoa(int(p.Port)))
	log := t.opts.Logger.With("component", "tunnel", "bind", bind)
	t.mu.Lock()
	closed, full, dup := t.closed, len(t.listeners) >= MaxListeners, t.listeners[p.ListenerID] != nil
	t.mu.Unlock()
	switch {
	case dup:
		return &protocol.TunnelListenResult{Status: protocol.TunnelListenerInUse, Message: "listenerId already listening"}, nil
	case closed:
		return &protocol.TunnelListenResult{Status: protocol.TunnelFailed, Message: "connection closing"}, nil
	case full:
		return &protocol.TunnelListenResult{Status: protocol.TunnelFailed, Message: fmt.Sprintf("too many listeners on this connection (%d)", MaxListeners)}, nil
	}
	ln, _, status, msg := reach(ctx, t, t.opts.ListenPolicy, p.Host, p.Port, log, "tunnel listen", "listening on", t.opts.Listen)
	if status != "" {
		return &protocol.TunnelListenResult{Status: status, Message: msg}, nil
	}
	bound, _ := netip.ParseAddrPort(ln.Addr().String())
	if p.Port == 0 {
		// An ephemeral port: the policy allowed the host on every port (allowsPort).
		log = log.With("bound", ln.Addr().String())
	}
	l := &listener{id: p.ListenerID, ln: ln, window: int64(peerWindow(p.Window)), addr: ln.Addr().String(), done: make(chan struct{})}
	t.mu.Lock()
	if t.closed || t.listeners[l.id] != nil {
		closed := t.closed
		t.mu.Unlock()
		_ = ln.Close()
		if closed {
			return &protocol.TunnelListenResult{Status: protocol.TunnelFailed, Message: "connection closing"}, nil
		}
		return &protocol.TunnelListenResult{Status: protocol.TunnelListenerInUse, Message: "listenerId already listening"}, nil
	}
	t.listeners[l.id] = l
	t.mu.Unlock()
	log.Info("tunnel listening", "listener_id", l.id, "address", l.addr)
	return &protocol.TunnelListenResult{Status: protocol.TunnelListening, Port: bound.Port(), Address: l.addr}, func() {
		t.mu.Lock()
		if t.closed || t.listeners[l.id] != l {
			t.mu.Unlock()
			return // Close or tunnel/unlisten closed it already
		}
		t.wg.Add(1)
		t.mu.Unlock()
		go t.routineAccept(l)
	}
}

// Unlisten serves tunnel/unlisten: the listener stops accepting (its socket is closed);
// connections it accepted stay.
func (t *Table) Unlisten(p *protocol.TunnelUnlistenParams) *protocol.TunnelUnlistenResult {
	t.mu.Lock()
	l := t.listeners[p.ListenerID]
	delete(t.listeners, p.ListenerID)
	t.mu.Unlock()
	if l == nil {
		return &protocol.TunnelUnlistenResult{}
	}
	l.stop()
	t.opts.Logger.Info("tunnel listener closed", "component", "tunnel", "listener_id", l.id, "address", l.addr, "reason", "unlisten")
	return &protocol.TunnelUnlistenResult{Closed: true}
}

// Listeners reports the open listeners.
func (t *Table) Listeners() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.listeners)
}

func (l *listener) stop() {
	select {
	case <-l.done:
	default:
		close(l.done)
	}
	_ = l.ln.Close()
}

// closeListeners closes every listener (Close). Called with t.closed set.
func (t *Table) closeListeners() {
	t.mu.Lock()
	ls := t.listeners
	t.listeners = make(map[uint64]*listener)
	t.mu.Unlock()
	for _, l := range ls {
		l.stop()
		t.opts.Logger.Info("tunnel listener closed", "component", "tunnel", "listener_id", l.id, "address", l.addr, "reason", "connection closed")
	}
}

// routineAccept accepts on l until it is closed. Owner: the Table (wg); ends on
// Unlisten or Close.
func (t *Table) routineAccept(l *listener) {
	defer t.wg.Done()
	backoff := 5 * time.Millisecond
	for {
		nc, err := l.ln.Accept()
		if err != nil {
			select {
			case <-l.done:
				return
			default:
			}
			if errors.Is(err, net.ErrClosed) {
				return
			}
			t.opts.Logger.Warn("tunnel accept failed", "component", "tunnel", "listener_id", l.id, "address", l.addr, "error", err.Error(), "retry_in", backoff)
			tm := time.NewTimer(backoff)
			select {
			case <-l.done:
				tm.Stop()
				return
			case <-tm.C:
			}
			backoff = min(2*backoff, acceptBackoffMax)
			continue
		}
		backoff = 5 * time.Millisecond
		t.accepted(l, nc)
	}
}

// accepted registers nc under a new executor-chosen id, announces it and starts its
// routines. It blocks on the outbound queue (tunnel/accepted), as a read would.
func (t *Table) accepted(l *listener, nc net.Conn) {
	peer := nc.RemoteAddr().String()
	log := t.opts.Logger.With("component", "tunnel", "listener_id", l.id, "address", l.addr, "peer", peer)
	t.mu.Lock()
	if t.closed || len(t.conns) >= MaxConns {
		closed := t.closed
		t.mu.Unlock()
		_ = nc.Close()
		if !closed {
			log.Warn("tunnel accept dropped", "reason", fmt.Sprintf("too many open tunnels on this connection (%d)", MaxConns))
		}
		return
	}
	id := t.nextAccepted
	for t.conns[id] != nil || id < protocol.TunnelAcceptedIDBase {
		if id < protocol.TunnelAcceptedIDBase {
			id = protocol.TunnelAcceptedIDBase
			continue
		}
		id++
	}
	t.nextAccepted = id + 1
	c := newConn(t, id, nc, l.window, t.opts.Window)
	t.conns[id] = c
	t.mu.Unlock()
	t.listenEvent(ListenEventAccepted)
	log.Info("tunnel accepted", "conn_id", id)
	err := t.n.Notify(t.life, protocol.MethodTunnelAccepted, &protocol.TunnelAcceptedParams{
		ListenerID: l.id, ConnID: id, Peer: peer, Window: uint64(t.opts.Window)})
	t.mu.Lock()
	if err != nil || t.closed {
		t.mu.Unlock()
		c.reset("", false)
		return
	}
	t.wg.Add(2)
	t.mu.Unlock()
	go c.routineRead()
	go c.routineWrite()
}
