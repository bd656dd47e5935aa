package harness

// Remote listeners (docs/protocol-extensions.md, capability tcpTunnelListen): ListenTCP
// has the executor listen on its host; each connection it accepts arrives as
// tunnel/accepted (taken on the read loop by tunnelTable.handle) and is handed out by
// TunnelListener.Accept as a TunnelConn, the same as DialTCP's.

import (
	"cmp"
	"context"
	"fmt"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/execlab/executor/executor/protocol"
)

// maxAcceptQueue bounds the accepted connections a TunnelListener holds before Accept
// takes them; beyond it new ones are closed (as a full kernel backlog would refuse them).
const maxAcceptQueue = 128

// unlistenTimeout bounds Close's tunnel/unlisten.
const unlistenTimeout = 10 * time.Second

// TunnelListener is a TCP listener on the executor's host (net.Listener). Accept returns
// *TunnelConn values. It is closed by Close, and fails (ErrTunnelReset) when the
// Client's connection breaks, including a relay reconnect: the executor closes its
// listeners with the connection. Safe for concurrent use.
type TunnelListener struct {
	c    *Client
	id   uint64
	addr string
	port int

	// mu guards the fields below. Held briefly, never across a write to the Client.
	mu      sync.Mutex
	queue   []*TunnelConn
	refused []*TunnelConn // arrived while closing or with the queue full; Accept or Close closes them
	closing bool          // Close was called: new connections are refused
	err     error         // the connection broke
	ready   chan struct{} // capacity 1: queue, closing or err changed
}

// ListenTCP has the executor listen on host:port of its host (port 0: an ephemeral
// port, see Port) and returns the listener; connections to it arrive through this
// Client's connection. The executor must advertise tcpTunnelListen (otherwise the error
// wraps ErrNotSupported and nothing is sent); its --tunnel-listen-allow policy decides
// which binds are allowed (otherwise the error wraps ErrTunnelRefused). ctx bounds the
// request only.
func (c *Client) ListenTCP(ctx context.Context, host string, port int) (*TunnelListener, error) {
	if !c.Capabilities().TCPTunnelListen {
		return nil, notSupported(protocol.MethodTunnelListen)
	}
	if port < 0 || port > 65535 {
		return nil, fmt.Errorf("tunnel: port %d out of range", port)
	}
	bind := net.JoinHostPort(host, strconv.Itoa(port))
	l := &TunnelListener{c: c, id: c.tunnels.nextListener.Add(1), ready: make(chan struct{}, 1)}
	c.tunnels.addListener(l)
	var res protocol.TunnelListenResult
	err := c.Call(ctx, protocol.MethodTunnelListen, protocol.TunnelListenParams{ListenerID: l.id, Host: host, Port: uint16(port), Window: TunnelWindow}, &res)
	if err != nil {
		// Cancelled or lost before the result: the executor may be listening.
		_ = l.Close()
		return nil, fmt.Errorf("listening on %s: %w", bind, extensionErr(protocol.MethodTunnelListen, err))
	}
	switch res.Status {
	case protocol.TunnelListening:
	case protocol.TunnelRefused:
		c.tunnels.removeListener(l)
		return nil, fmt.Errorf("%w: %s", ErrTunnelRefused, res.Message)
	default:
		c.tunnels.removeListener(l)
		return nil, fmt.Errorf("listening on %s: %s: %s", bind, res.Status, res.Message)
	}
	l.addr, l.port = res.Address, int(res.Port)
	if l.addr == "" {
		l.addr = net.JoinHostPort(host, strconv.Itoa(l.port))
	}
	return l, nil
}

// accepted takes a tunnel/accepted (read loop; never blocks): tc is queued for Accept,
// or, while closing or with the queue full, set aside for Accept or Close to close
// (closing sends tunnel/close, a write the read loop must not make).
func (l *TunnelListener) accepted(tc *TunnelConn) {
	l.mu.Lock()
	if l.closing || l.err != nil || len(l.queue) >= maxAcceptQueue {
		l.refused = append(l.refused, tc)
	} else {
		l.queue = append(l.queue, tc)
	}
	l.mu.Unlock()
	signal(l.ready)
}

// closeRefused closes the connections accepted refused.
func (l *TunnelListener) closeRefused() {
	l.mu.Lock()
	r := l.refused
	l.refused = nil
	l.mu.Unlock()
	for _, tc := range r {
		_ = tc.Close()
	}
}

func (l *TunnelListener) fail(err error) {
	l.mu.Lock()
	l.err = cmp.Or(l.err, err) // the first failure sticks
	l.mu.Unlock()
	signal(l.ready)
}

// Accept implements net.Listener: the next connection accepted on the executor's host,
// as a *TunnelConn (RemoteAddr is the peer's address there). It returns net.ErrClosed
// after Close and an error wrapping ErrTunnelReset when the Client's connection broke.
func (l *TunnelListener) Accept() (net.Conn, error) {
	l.closeRefused()
	l.mu.Lock()
	for {
		switch {
		case len(l.queue) > 0:
			tc := l.queue[0]
			l.queue[0] = nil
			l.queue = l.queue[1:]
			more := len(l.queue) > 0
			l.mu.Unlock()
			if more {
				signal(l.ready)
			}
			return tc, nil
		case l.closing:
			l.mu.Unlock()
			return nil, net.ErrClosed
		case l.err != nil:
			err := l.err
			l.mu.Unlock()
			return nil, err
		}
		l.mu.Unlock()
		<-l.ready
		l.closeRefused()
		l.mu.Lock()
	}
}

// Close implements net.Listener: the executor stops listening (tunnel/unlisten) and the
// connections not yet accepted are closed; accepted ones stay open. Pending Accepts
// return net.ErrClosed.
func (l *TunnelListener) Close() error {
	l.mu.Lock()
	if l.closing {
		l.mu.Unlock()
		return nil
	}
	l.closing = true
	broken := l.err != nil
	l.mu.Unlock()
	signal(l.ready)
	var err error
	if !broken && l.c.tunnels.getListener(l.id) == l {
		// Connections accepted before the executor stopped arrive before the result
		// (one ordered stream) and are refused by accepted (closing is set).
		var res protocol.TunnelUnlistenResult
		ctx, cancel := context.WithTimeout(l.c.life, unlistenTimeout)
		err = l.c.Call(ctx, protocol.MethodTunnelUnlisten, protocol.TunnelUnlistenParams{ListenerID: l.id}, &res)
		cancel()
		if err != nil && l.c.life.Err() != nil {
			err = nil // the connection is gone, and the executor's listener with it
		}
	}
	l.c.tunnels.removeListener(l)
	l.mu.Lock()
	q := append(l.queue, l.refused...)
	l.queue, l.refused = nil, nil
	l.mu.Unlock()
	for _, tc := range q {
		_ = tc.Close()
	}
	if err != nil {
		return fmt.Errorf("closing listener %s: %w", l.addr, err)
	}
	return nil
}

// Addr implements net.Listener: the bound address on the executor's host (network
// "tunnel").
func (l *TunnelListener) Addr() net.Addr { return tunnelAddr(l.addr) }

// Port is the bound port on the executor's host (the chosen one after port 0).
func (l *TunnelListener) Port() int { return l.port }

// handleAccepted takes tunnel/accepted on the read loop: a new tunnel for one of our
// listeners. One for no listener of ours is ignored (ours never leave one: Close
// unlistens before forgetting the id); the executor's side then lives until the
// connection ends.
func (t *tunnelTable) handleAccepted(c *Client, params []byte) {
	lid, ok := memberUint(params, "listenerId")
	id, ok2 := memberUint(params, "connId")
	win, ok3 := memberUint(params, "window")
	if !ok || !ok2 || !ok3 {
		return
	}
	l := t.getListener(lid)
	if l == nil {
		return
	}
	peer, _ := memberString(params, "peer")
	tc := newTunnelConn(c, id, peer)
	tc.credit = int64(min(win, 1<<30))
	t.mu.Lock()
	if t.conns == nil {
		t.conns = make(map[uint64]*TunnelConn)
	}
	if t.conns[id] != nil {
		t.mu.Unlock()
		return // an id in use: ignored, as the executor never sends one
	}
	t.conns[id] = tc
	t.mu.Unlock()
	l.accepted(tc)
}

func (t *tunnelTable) addListener(l *TunnelListener) { tablePut(t, &t.listeners, l.id, l) }

func (t *tunnelTable) getListener(id uint64) *TunnelListener {
	return tableGet(t, &t.listeners, id)
}

func (t *tunnelTable) removeListener(l *TunnelListener) {
	t.mu.Lock()
	if t.listeners[l.id] == l {
		delete(t.listeners, l.id)
	}
	t.mu.Unlock()
}
