package serve

import (
	"context"
	"net"
	"sync"
	"sync/atomic"
)

// connLimiter caps the listener's open connections at max. A connection that arrives at
// the cap evicts the oldest connection not inside a handler (accepted with no complete
// request yet, sending headers slowly, or idle between keep-alive requests); when every
// connection is inside a handler (WebSocket sessions, requests being answered) the new
// one is closed instead. Idle or slow sockets therefore never keep a legitimate request
// out, and the listener never holds more than max descriptors (max+1 for the instant of
// an eviction). Safe for concurrent use.
type connLimiter struct {
	max int
	// mu guards conns and seq; held only for map updates and the eviction scan (O(max)).
	mu    sync.Mutex
	conns map[*limitedConn]struct{}
	seq   uint64

	evicted atomic.Uint64 // connections closed to make room
	refused atomic.Uint64 // connections closed because every slot was busy
}

func newConnLimiter(max int) *connLimiter {
	return &connLimiter{max: max, conns: make(map[*limitedConn]struct{}, max)}
}

// limitedConn is an admitted connection. Close releases its slot once.
type limitedConn struct {
	net.Conn
	l    *connLimiter
	seq  uint64 // accept order, for choosing the oldest
	busy int    // handlers running on it; guarded by l.mu

	closeOnce sync.Once
}

func (c *limitedConn) Close() error {
	err := c.Conn.Close()
	c.closeOnce.Do(func() {
		c.l.mu.Lock()
		delete(c.l.conns, c)
		c.l.mu.Unlock()
	})
	return err
}

// enter and exit bracket a handler running on c: a busy connection is never evicted.
func (c *limitedConn) enter() { c.l.mu.Lock(); c.busy++; c.l.mu.Unlock() }
func (c *limitedConn) exit()  { c.l.mu.Lock(); c.busy--; c.l.mu.Unlock() }

// admit registers c, or returns nil when it must be refused. victim, when non-nil, is
// the connection evicted for c; the caller closes it (outside mu).
func (l *connLimiter) admit(c net.Conn) (lc, victim *limitedConn) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.conns) >= l.max {
		for o := range l.conns {
			if o.busy == 0 && (victim == nil || o.seq < victim.seq) {
				victim = o
			}
		}
		if victim == nil {
			l.refused.Add(1)
			return nil, nil
		}
		delete(l.conns, victim) // the slot passes to c now; victim's Close finds nothing
		l.evicted.Add(1)
	}
	l.seq++
	lc = &limitedConn{Conn: c, l: l, seq: l.seq}
	l.conns[lc] = struct{}{}
	return lc, victim
}

// open returns the number of admitted, unclosed connections.
func (l *connLimiter) open() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.conns)
}

// limitListener admits accepted connections through a connLimiter.
type limitListener struct {
	net.Listener
	l *connLimiter
}

func (ln *limitListener) Accept() (net.Conn, error) {
	for {
		c, err := ln.Listener.Accept()
		if err != nil {
			return nil, err
		}
		lc, victim := ln.l.admit(c)
		if victim != nil {
			_ = victim.Close()
		}
		if lc != nil {
			return lc, nil
		}
		_ = c.Close()
	}
}

// connKey carries the request's *limitedConn in its context (http.Server.ConnContext).
type connKey struct{}

func withConn(ctx context.Context, c net.Conn) context.Context {
	if lc, ok := c.(*limitedConn); ok {
		return context.WithValue(ctx, connKey{}, lc)
	}
	return ctx
}

func connOf(ctx context.Context) *limitedConn {
	lc, _ := ctx.Value(connKey{}).(*limitedConn)
	return lc
}

// maxConnsFor derives the connection cap from the soft RLIMIT_NOFILE (0 = unknown).
func maxConnsFor(nofile uint64) int {
	if nofile == 0 {
		return DefaultMaxConns
	}
	n := nofile / FDShareForConns
	switch {
	case n < MinMaxConns:
		return MinMaxConns
	case n > DefaultMaxConns:
		return DefaultMaxConns
	}
	return int(n)
}
