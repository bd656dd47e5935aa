package connlimit

import (
	"container/list"
	"crypto/tls"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
)

// Limiter caps the open connections of one listener at Max (see the package doc).
type Limiter struct {
	max int

	// mu guards the fields below: Accept, ConnState (every connection's serving
	// goroutine) and Close (any goroutine, including a WebSocket owner's) race on them.
	mu        sync.Mutex
	open      int
	evictable list.List // of *conn, longest-waiting first
	freed     chan struct{}
	done      chan struct{} // closed by stop: Accept stops waiting
	stopped   bool

	evicted atomic.Uint64 // connections closed to make room
}

// New returns a Limiter admitting at most max connections (max ≥ 1).
func New(max int) *Limiter {
	if max < 1 {
		max = 1
	}
	return &Limiter{max: max, done: make(chan struct{})}
}

// Listener returns ln with every accepted connection counted against l. Its Close stops
// Accepts waiting for a slot, then closes ln. Serve it with an http.Server whose
// ConnState is l.ConnState.
func (l *Limiter) Listener(ln net.Listener) net.Listener { return &listener{Listener: ln, l: l} }

// Open returns the connections currently counted.
func (l *Limiter) Open() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.open
}

// Evicted returns how many idle connections were closed to make room.
func (l *Limiter) Evicted() uint64 { return l.evicted.Load() }

// ConnState is the http.Server's ConnState hook: it keeps the evictable list up to date.
// Connections are the ones Listener returned (for TLS, the *tls.Conn's NetConn()).
func (l *Limiter) ConnState(nc net.Conn, st http.ConnState) {
	if tc, ok := nc.(*tls.Conn); ok {
		nc = tc.NetConn()
	}
	c, ok := nc.(*conn)
	if !ok || c.l != l {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if c.closed {
		return
	}
	if c.elem != nil {
		l.evictable.Remove(c.elem)
		c.elem = nil
	}
	if st == http.StateNew || st == http.StateIdle {
		c.elem = l.evictable.PushBack(c)
	}
}

// listener is a net.Listener whose connections count against a Limiter.
type listener struct {
	net.Listener
	l *Limiter
}

// Accept reserves a slot (evicting if needed, else waiting), then accepts.
func (ln *listener) Accept() (net.Conn, error) {
	if err := ln.l.reserve(); err != nil {
		return nil, err
	}
	c, err := ln.Listener.Accept()
	if err != nil {
		ln.l.unreserve()
		return nil, err
	}
	return &conn{Conn: c, l: ln.l}, nil
}

// Close stops waiting Accepts and closes the listener.
func (ln *listener) Close() error {
	ln.l.stop()
	return ln.Listener.Close()
}

// conn is one counted connection. elem is its place in evictable and closed makes Close
// release the slot once; both guarded by l.mu.
type conn struct {
	net.Conn
	l      *Limiter
	elem   *list.Element
	closed bool
}

// Close closes the connection and releases its slot once.
func (c *conn) Close() error {
	err := c.Conn.Close()
	l := c.l
	l.mu.Lock()
	if !c.closed {
		c.closed = true
		if c.elem != nil {
			l.evictable.Remove(c.elem)
			c.elem = nil
		}
		l.releaseLocked()
	}
	l.mu.Unlock()
	return err
}

func (l *Limiter) reserve() error {
	l.mu.Lock()
	for l.open >= l.max {
		if l.stopped {
			l.mu.Unlock()
			return net.ErrClosed
		}
		if e := l.evictable.Front(); e != nil {
			victim := e.Value.(*conn)
			l.evictable.Remove(e)
			victim.elem = nil
			l.mu.Unlock()
			l.evicted.Add(1)
			_ = victim.Close() // releases its slot
			l.mu.Lock()
			continue
		}
		if l.freed == nil {
			l.freed = make(chan struct{})
		}
		freed := l.freed
		l.mu.Unlock()
		select {
		case <-freed:
		case <-l.done:
		}
		l.mu.Lock()
	}
	l.open++
	l.mu.Unlock()
	return nil
}

func (l *Limiter) unreserve() {
	l.mu.Lock()
	l.releaseLocked()
	l.mu.Unlock()
}

func (l *Limiter) releaseLocked() {
	l.open--
	if l.freed != nil {
		close(l.freed)
		l.freed = nil
	}
}

func (l *Limiter) stop() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.stopped {
		l.stopped = true
		close(l.done)
	}
}
