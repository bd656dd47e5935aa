package tunnel

import (
	"errors"
	"io"
	"net"
	"sync"

	"github.com/execlab/executor/executor/protocol"
)

// conn is one tunnelled TCP connection. routineRead owns reads of nc, routineWrite owns
// writes; reset may close nc from anywhere, which ends both.
type conn struct {
	t      *Table
	id     uint64
	nc     net.Conn
	window int // our receive window (bytes)

	// mu guards everything below. Held briefly; never across socket I/O or Notify.
	mu       sync.Mutex
	credit   int64    // bytes we may still send to the peer
	inbuf    [][]byte // received, not yet written to nc; at most window bytes in total
	inBytes  int
	unacked  int  // bytes written to nc and not yet acknowledged to the peer
	gotEOF   bool // the peer sent tunnel/eof
	sentEOF  bool // we sent tunnel/eof (nc reached EOF)
	wroteEOF bool // we half-closed nc after the peer's eof
	dead     bool // reset or finished
	notify   bool // on dead: routineWrite sends tunnel/close with reason
	reason   string

	credited chan struct{} // capacity 1: credit arrived (routineRead waits)
	wake     chan struct{} // capacity 1: data, eof or death (routineWrite waits)
}

func newConn(t *Table, id uint64, nc net.Conn, credit int64, window int) *conn {
	return &conn{t: t, id: id, nc: nc, window: window, credit: credit,
		credited: make(chan struct{}, 1), wake: make(chan struct{}, 1)}
}

func signal(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// received queues data from the peer (read loop; never blocks). More than the window is
// a protocol violation that resets this connection.
func (c *conn) received(b []byte) {
	c.mu.Lock()
	if c.dead || c.gotEOF {
		c.mu.Unlock()
		return
	}
	if c.inBytes+len(b) > c.window {
		c.mu.Unlock()
		c.reset("peer exceeded the receive window", true)
		return
	}
	if len(b) > 0 {
		c.inbuf = append(c.inbuf, b)
		c.inBytes += len(b)
	}
	c.mu.Unlock()
	signal(c.wake)
}

// acked returns credit (read loop; never blocks).
func (c *conn) acked(n uint64) {
	c.mu.Lock()
	c.credit += int64(min(n, MaxWindow))
	c.mu.Unlock()
	signal(c.credited)
}

// peerEOF records the peer's FIN (read loop; never blocks).
func (c *conn) peerEOF() {
	c.mu.Lock()
	c.gotEOF = true
	c.mu.Unlock()
	signal(c.wake)
}

// reset ends the connection once: nc is closed (which ends both routines), the conn
// leaves the table, and, when notify is set, routineWrite tells the peer with
// tunnel/close{reason}. It never blocks, so the read loop may call it.
func (c *conn) reset(reason string, notify bool) {
	c.mu.Lock()
	if c.dead {
		c.mu.Unlock()
		return
	}
	c.dead, c.notify, c.reason = true, notify, reason
	c.inbuf, c.inBytes = nil, 0
	c.mu.Unlock()
	_ = c.nc.Close()
	c.t.remove(c)
	signal(c.wake)
	signal(c.credited)
	if reason != "" {
		c.t.opts.Logger.Debug("tunnel reset", "component", "tunnel", "conn_id", c.id, "reason", reason)
	}
}

// finishLocked ends an orderly connection when both directions are done, and reports
// whether it did (the caller then sends tunnel/close{}).
func (c *conn) finishLocked() bool {
	if c.dead || !c.sentEOF || !c.wroteEOF {
		return false
	}
	c.dead = true
	return true
}

// eofDone records one direction's eof (flag: &c.sentEOF or &c.wroteEOF, guarded by mu)
// and finishes the connection when that was the last step.
func (c *conn) eofDone(flag *bool) {
	c.mu.Lock()
	*flag = true
	done := c.finishLocked()
	c.mu.Unlock()
	if done {
		c.finish()
	}
}

func (c *conn) finish() {
	_ = c.nc.Close()
	c.t.remove(c)
	_ = c.t.n.Notify(c.t.life, protocol.MethodTunnelClose, &protocol.TunnelCloseParams{ConnID: c.id})
}

var bufPool = sync.Pool{New: func() any { b := make([]byte, readChunk); return &b }}

// routineRead copies nc to the peer within the credit. Owner: the Table (wg); ends when
// nc ends or is closed. Between reads it holds no buffer, so an idle connection costs
// its goroutine stacks only (waitReadable).
func (c *conn) routineRead() {
	defer c.t.wg.Done()
	for {
		waitReadable(c.nc)
		c.mu.Lock()
		for c.credit <= 0 && !c.dead {
			c.mu.Unlock()
			<-c.credited
			c.mu.Lock()
		}
		if c.dead {
			c.mu.Unlock()
			return
		}
		n := int(min(c.credit, readChunk))
		c.mu.Unlock()
		bp := bufPool.Get().(*[]byte)
		m, err := c.nc.Read((*bp)[:n])
		if m > 0 {
			c.mu.Lock()
			c.credit -= int64(m)
			c.mu.Unlock()
			if nerr := c.t.n.Notify(c.t.life, protocol.MethodTunnelData, &protocol.TunnelDataParams{ConnID: c.id, Data: (*bp)[:m]}); nerr != nil {
				bufPool.Put(bp)
				c.reset("", false)
				return
			}
		}
		bufPool.Put(bp)
		if err == nil {
			continue
		}
		if !errors.Is(err, io.EOF) {
			c.reset("reading from destination: "+unwrapOp(err).Error(), true)
			return
		}
		c.mu.Lock()
		if c.dead {
			c.mu.Unlock()
			return
		}
		c.mu.Unlock()
		if c.t.n.Notify(c.t.life, protocol.MethodTunnelEOF, &protocol.TunnelEOFParams{ConnID: c.id}) != nil {
			c.reset("", false)
			return
		}
		c.eofDone(&c.sentEOF)
		return
	}
}

// routineWrite writes the peer's data to nc in order, acknowledges it, half-closes nc
// after the peer's eof, and sends the tunnel/close of a reset. Owner: the Table (wg).
func (c *conn) routineWrite() {
	defer c.t.wg.Done()
	for {
		c.mu.Lock()
		for len(c.inbuf) == 0 && !c.dead && !c.gotEOF {
			c.mu.Unlock()
			<-c.wake
			c.mu.Lock()
		}
		if c.dead {
			notify, reason := c.notify, c.reason
			c.notify = false
			c.mu.Unlock()
			if notify {
				_ = c.t.n.Notify(c.t.life, protocol.MethodTunnelClose, &protocol.TunnelCloseParams{ConnID: c.id, Reason: reason})
			}
			return
		}
		if len(c.inbuf) == 0 { // gotEOF and everything written
			c.mu.Unlock()
			if cw, ok := c.nc.(interface{ CloseWrite() error }); ok {
				_ = cw.CloseWrite()
			}
			c.eofDone(&c.wroteEOF)
			return
		}
		b := c.inbuf[0]
		c.inbuf[0] = nil
		c.inbuf = c.inbuf[1:]
		c.mu.Unlock()
		if _, err := c.nc.Write(b); err != nil {
			c.reset("writing to destination: "+unwrapOp(err).Error(), true)
			continue // sends the close
		}
		c.mu.Lock()
		c.inBytes -= len(b)
		c.unacked += len(b)
		var ack int
		if c.unacked >= c.window/4 || c.inBytes == 0 {
			ack, c.unacked = c.unacked, 0
		}
		c.mu.Unlock()
		if ack > 0 {
			if c.t.n.Notify(c.t.life, protocol.MethodTunnelAck, &protocol.TunnelAckParams{ConnID: c.id, Bytes: uint64(ack)}) != nil {
				c.reset("", false)
			}
		}
	}
}
