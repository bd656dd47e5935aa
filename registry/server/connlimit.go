package server

import (
	"container/list"
	"crypto/tls"
	"net"
	"net/http"
	"sync"
)

// connLimiter caps the open connections of one listener at max (security issue 13: idle
// sockets used to exhaust the process's file descriptors and starve real clients).
//
// Policy when a new connection would exceed max: close the connection that has waited
// longest in an evictable state — accepted but no request byte read yet (http.StateNew) or
// idle between keep-alive requests (http.StateIdle) — and admit the newcomer. A client's
// request is never cut: active, hijacked (rendezvous websockets) and closing connections
// are not evictable. When nothing is evictable, Accept waits for a connection to close
// (back-pressure into the kernel's listen backlog).
//
// The http.Server reports states through connState (its ConnState hook); connections are
// the *limitConn values Accept returned (for TLS, the *tls.Conn's NetConn()).
type connLimiter struct {
	max int

	// mu guards the fields below: Accept, connState (every connection's serving
	// goroutine) and Close (any goroutine, including the rendezvous's) race on them.
	mu        sync.Mutex
	open      int
	evictable list.List // of *limitConn, longest-waiting first
	freed     chan struct{}
	done      chan struct{} // closed by stop: Accept stops waiting
	stopped   bool
}

func newConnLimiter(max int) *connLimiter {
	return &connLimiter{max: max, done: make(chan struct{})}
}

// limitListener is a net.Listener whose connections count against a connLimiter.
type limitListener struct {
	net.Listener
	l *connLimiter
}

// limitConn is one counted connection. elem is its place in evictable (guarded by the
// limiter's mu); closed makes Close release the slot once.
type limitConn struct {
	net.Conn
	l      *connLimiter
	elem   *list.Element
	closed bool // guarded by l.mu
}

// Accept reserves a slot (evicting if needed, else waiting), then accepts.
func (ln *limitListener) Accept() (net.Conn, error) {
	if err := ln.l.reserve(); err != nil {
		return nil, err
	}
	c, err := ln.Listener.Accept()
	if err != nil {
		ln.l.unreserve()
		return nil, err
	}
	return &limitConn{Conn: c, l: ln.l}, nil
}

// Close stops waiting Accepts and closes the listener.
func (ln *limitListener) Close() error {
	ln.l.stop()
	return ln.Listener.Close()
}

func (l *connLimiter) reserve() error {
	l.mu.Lock()
	for l.open >= l.max {
		if l.stopped {
			l.mu.Unlock()
			return net.ErrClosed
		}
		if e := l.evictable.Front(); e != nil {
			victim := e.Value.(*limitConn)
			l.evictable.Remove(e)
			victim.elem = nil
			l.mu.Unlock()
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

func (l *connLimiter) unreserve() {
	l.mu.Lock()
	l.releaseLocked()
	l.mu.Unlock()
}

func (l *connLimiter) releaseLocked() {
	l.open--
	if l.freed != nil {
		close(l.freed)
		l.freed = nil
	}
}

func (l *connLimiter) stop() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.stopped {
		l.stopped = true
		close(l.done)
	}
}

// Close closes the connection and releases its slot once.
func (c *limitConn) Close() error {
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

// connState is the http.Server's ConnState hook: it keeps evictable up to date.
func (l *connLimiter) connState(nc net.Conn, st http.ConnState) {
	if tc, ok := nc.(*tls.Conn); ok {
		nc = tc.NetConn()
	}
	c, ok := nc.(*limitConn)
	if !ok {
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

// openConns returns the connections currently counted.
func (l *connLimiter) openConns() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.open
}
