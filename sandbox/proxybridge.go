package sandbox

// Byte-stream bridges of the managed network (spec/sandbox.md §3.10). The launcher
// stage runs one with Unix listeners dialing the host proxy over TCP; the inner stage
// runs one with TCP listeners on 127.0.0.1 dialing those Unix sockets. Bytes are
// copied verbatim in both directions; nothing is parsed, buffered beyond io.Copy's
// buffer, or logged.

import (
	"context"
	"errors"
	"io"
	"net"
	"sync"
	"time"
)

// bridge forwards every connection accepted on its listeners to the listener's dial
// target. Goroutines: one routineAccept per listener and two per forwarded connection
// (one per direction); close stops and waits for all of them. Methods are safe for
// concurrent use; nothing can start after close.
type bridge struct {
	ctx    context.Context // the bridge's lifetime: cancelled by close, bounds dials
	cancel context.CancelFunc
	wg     sync.WaitGroup

	// mu guards lns, conns and closed: accept loops add connections while close
	// tears them down.
	mu     sync.Mutex
	lns    []net.Listener
	conns  map[net.Conn]struct{}
	closed bool
}

func newBridge() *bridge {
	ctx, cancel := context.WithCancel(context.Background())
	return &bridge{ctx: ctx, cancel: cancel, conns: map[net.Conn]struct{}{}}
}

// dialFunc opens the next hop for one accepted connection.
type dialFunc func(ctx context.Context) (net.Conn, error)

// serve takes ownership of ln and forwards its connections through dial. After close
// it closes ln at once.
func (b *bridge) serve(ln net.Listener, dial dialFunc) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		ln.Close()
		return
	}
	b.lns = append(b.lns, ln)
	b.wg.Add(1)
	go b.routineAccept(ln, dial)
}

// close stops accepting, cuts every forwarded connection, and waits for all bridge
// goroutines. It is idempotent.
func (b *bridge) close() {
	b.mu.Lock()
	if !b.closed {
		b.closed = true
		b.cancel()
		for _, ln := range b.lns {
			ln.Close()
		}
		for c := range b.conns {
			c.Close()
		}
	}
	b.mu.Unlock()
	b.wg.Wait()
}

// track registers c for close; false means the bridge is closing and c was closed.
func (b *bridge) track(c net.Conn) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		c.Close()
		return false
	}
	b.conns[c] = struct{}{}
	return true
}

func (b *bridge) untrack(c net.Conn) {
	b.mu.Lock()
	delete(b.conns, c)
	b.mu.Unlock()
	c.Close()
}

// acceptBackoff spaces out retries after a non-fatal accept error (EMFILE and the
// like) so a descriptor shortage cannot spin a core.
const acceptBackoff = 20 * time.Millisecond

func (b *bridge) routineAccept(ln net.Listener, dial dialFunc) {
	defer b.wg.Done()
	for {
		c, err := ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) || b.ctx.Err() != nil {
				return
			}
			select {
			case <-b.ctx.Done():
				return
			case <-time.After(acceptBackoff):
			}
			continue
		}
		if !b.track(c) {
			return
		}
		b.wg.Add(1)
		go b.routineForward(c, dial)
	}
}

// routineForward dials the next hop for c and copies both ways until both directions
// end; a half-close is passed on so request/response protocols finish cleanly.
func (b *bridge) routineForward(c net.Conn, dial dialFunc) {
	defer b.wg.Done()
	defer b.untrack(c)
	ctx, cancel := context.WithTimeout(b.ctx, proxyDialTimeout)
	up, err := dial(ctx)
	cancel()
	if err != nil {
		return
	}
	if !b.track(up) {
		return
	}
	defer b.untrack(up)
	done := make(chan struct{})
	b.wg.Add(1)
	go func() { // upstream -> client; joined below
		defer b.wg.Done()
		defer close(done)
		pipe(c, up)
	}()
	pipe(up, c)
	<-done
}

// pipe copies src to dst, then half-closes dst (or closes it when it cannot).
func pipe(dst, src net.Conn) {
	_, _ = io.Copy(dst, src)
	if cw, ok := dst.(interface{ CloseWrite() error }); ok {
		if cw.CloseWrite() == nil {
			return
		}
	}
	dst.Close()
}
