package wsconn

import (
	"context"
	"fmt"
	"net"
	"sync"
	"time"
)

// corkConn is the TCP connection under a websocket this package dialled (issue 16).
//
// A client must mask its frames, and coder/websocket masks through its 4 KiB write buffer,
// flushing it whenever it fills: one 60 KiB Noise record in a relay frame took 15 write
// syscalls (the executor's rendezvous socket is a client; profiled: writes were 46 % of
// its CPU on a relay stream, 164,000 write calls per 256 MiB against the reference's
// 69,000). While a frame is written (Conn.WriteFrame holds the cork), the bytes that reach
// the connection are collected and go out in one write at release. Whatever else is
// written meanwhile (a pong or close frame from the read side) joins the same batch in
// order, so byte order on the wire is unchanged; nothing is held past release.
//
// The batch buffer comes from a pool while a frame is written, so an idle connection holds
// none; a batch over corkLimit is written through instead of growing without bound.
type corkConn struct {
	net.Conn

	// mu guards held and buf, and is held across every write to Conn so that a release and
	// a concurrent write-through cannot reorder bytes.
	mu   sync.Mutex
	held bool
	buf  *[]byte // non-nil while held
}

// corkPool holds batch buffers. They start at corkInitial bytes (a Noise record frame and
// its header fit) and grow for larger frames up to corkLimit; starting small keeps what the
// pool retains near the frames actually written.
var corkPool = sync.Pool{New: func() any { b := make([]byte, 0, corkInitial); return &b }}

// Write collects p while the cork is held and the batch stays within corkLimit; otherwise
// it writes the pending batch, then p.
func (c *corkConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.held {
		if b := *c.buf; len(b)+len(p) <= corkLimit {
			*c.buf = append(b, p...)
			return len(p), nil
		}
		if err := c.flushLocked(); err != nil {
			return 0, err
		}
	}
	return c.Conn.Write(p)
}

// hold starts collecting writes.
func (c *corkConn) hold() {
	c.mu.Lock()
	c.held = true
	c.buf = corkPool.Get().(*[]byte)
	c.mu.Unlock()
}

// release stops collecting and writes the batch in one call, bounded by ctx's deadline
// (WriteFrame always sets one). On an error the connection must be considered broken: a
// partial frame may be on the wire.
func (c *corkConn) release(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.held {
		return nil
	}
	var err error
	if len(*c.buf) > 0 {
		if d, ok := ctx.Deadline(); ok {
			_ = c.Conn.SetWriteDeadline(d)
			defer func() { _ = c.Conn.SetWriteDeadline(time.Time{}) }()
		}
		err = c.flushLocked()
	}
	c.held = false
	*c.buf = (*c.buf)[:0]
	corkPool.Put(c.buf)
	c.buf = nil
	return err
}

// flushLocked writes the pending batch. mu must be held, and the cork too.
func (c *corkConn) flushLocked() error {
	b := *c.buf
	*c.buf = b[:0]
	if len(b) == 0 {
		return nil
	}
	if _, err := c.Conn.Write(b); err != nil {
		return fmt.Errorf("writing batched websocket frame: %w", err)
	}
	return nil
}

// writeFrame writes b, one whole websocket frame, in one write bounded by deadline and ctx
// (whose end interruptWrite signals), ordered with every other write to the connection
// (rawframe.go).
func (c *corkConn) writeFrame(ctx context.Context, b []byte, deadline time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	_ = c.Conn.SetWriteDeadline(deadline)
	if err := ctx.Err(); err != nil {
		return err // ended before the deadline was set: interruptWrite's may be overwritten
	}
	_, err := c.Conn.Write(b)
	_ = c.Conn.SetWriteDeadline(time.Time{})
	if err != nil {
		return fmt.Errorf("writing websocket frame: %w", err)
	}
	return nil
}

// interruptWrite makes a write in progress (or the next one) fail at once: its ctx ended.
// The deadline is set without mu, which the blocked write holds.
func (c *corkConn) interruptWrite() { _ = c.Conn.SetWriteDeadline(time.Unix(1, 0)) }

// writeBuffers writes b, the parts of one whole websocket frame, as writeFrame does: with
// one writev when Conn is a TCP (or Unix) connection, else one write per part, still
// under mu so nothing comes between them.
func (c *corkConn) writeBuffers(ctx context.Context, b net.Buffers, deadline time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	_ = c.Conn.SetWriteDeadline(deadline)
	if err := ctx.Err(); err != nil {
		return err // ended before the deadline was set: interruptWrite's may be overwritten
	}
	_, err := b.WriteTo(c.Conn)
	_ = c.Conn.SetWriteDeadline(time.Time{})
	if err != nil {
		return fmt.Errorf("writing websocket frame: %w", err)
	}
	return nil
}
