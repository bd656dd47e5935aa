package chaos

import (
	"context"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// gatedConn is a TCP connection of the proxy that a stall can freeze: while its side is
// stalled, Read holds what it got and Write waits, so the websocket layers above neither
// receive frames nor answer Pings, and the peer sees a live but silent TCP connection (no
// FIN, no RST). Its side is set once the request it carries is classified; until then it
// is never gated.
type gatedConn struct {
	net.Conn
	p    *Proxy
	side atomic.Uint32 // Side; 0 = not yet known

	done chan struct{}
	once sync.Once
}

func (p *Proxy) gate(c net.Conn, side Side) *gatedConn {
	g := &gatedConn{Conn: c, p: p, done: make(chan struct{})}
	g.side.Store(uint32(side))
	return g
}

func (g *gatedConn) setSide(s Side) { g.side.Store(uint32(s)) }

// wait blocks while the conn's side is stalled; false when the conn was closed.
func (g *gatedConn) wait() bool {
	for {
		until := g.p.stalledUntil(Side(g.side.Load()))
		if until.IsZero() {
			return true
		}
		t := time.NewTimer(time.Until(until))
		select {
		case <-t.C:
		case <-g.done:
			t.Stop()
			return false
		}
	}
}

// Read reads, then holds the bytes until no stall is in force.
func (g *gatedConn) Read(b []byte) (int, error) {
	if !g.wait() {
		return 0, net.ErrClosed
	}
	n, err := g.Conn.Read(b)
	if !g.wait() {
		return 0, net.ErrClosed
	}
	return n, err
}

// Write waits out any stall, then writes.
func (g *gatedConn) Write(b []byte) (int, error) {
	if !g.wait() {
		return 0, net.ErrClosed
	}
	return g.Conn.Write(b)
}

// Close closes the TCP connection and releases a Read or Write waiting on a stall.
func (g *gatedConn) Close() error {
	g.once.Do(func() { close(g.done) })
	return g.Conn.Close()
}

// gatedListener wraps every accepted connection in a gatedConn of unknown side.
type gatedListener struct {
	net.Listener
	p *Proxy
}

func (l *gatedListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return l.p.gate(c, 0), nil
}

// connKey carries the request's *gatedConn in its context (http.Server.ConnContext).
type connKey struct{}

// dialUpstream opens a TCP connection to the upstream, gated as side (the side travels in
// the dial ctx).
func (p *Proxy) dialUpstream(ctx context.Context, network, addr string) (net.Conn, error) {
	c, err := (&net.Dialer{Timeout: DialTimeout}).DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	side, _ := ctx.Value(sideKey{}).(Side)
	return p.gate(c, side), nil
}

// sideKey carries the side of an upstream dial in its context.
type sideKey struct{}
