package harness

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"sync"
	"sync/atomic"

	"github.com/execlab/executor/internal/wsmsg"
)

// A client must mask every frame it sends (RFC 6455 §5.3), and coder/websocket masks a
// frame by copying it through its 4 KiB bufio.Writer: unbuffered, a 1.4 MB fs/writeBlock
// request would leave as ~340 write system calls and as many TCP segments, which cost
// the harness more CPU than encoding the request and the server more receive work
// (issue 28, writeblock_local). batchConn collects the writes of one WebSocket message and
// sends them with as few system calls as batchFlushAt allows; the bytes on the wire are
// the same.

// batchFlushAt is how many bytes a batch collects before writing them out; it is also
// the largest buffer a batchConn keeps between messages.
const batchFlushAt = 2 << 20

// batchConn is the TCP connection of a DialLocal client. Outside a batch, writes pass
// straight through; inside one (begin … end, around one WebSocket message), they are
// appended to buf and written when it reaches batchFlushAt or at end. Writes the
// websocket library makes from other goroutines meanwhile (a pong, a close frame) join
// the batch, so the order of bytes on the wire is the order of Write calls.
type batchConn struct {
	net.Conn

	mu       sync.Mutex
	batching bool   // guarded by mu
	buf      []byte // guarded by mu; pending bytes of the batch
	err      error  // guarded by mu; the first failed write of the batch
}

func (c *batchConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.batching {
		return c.Conn.Write(p)
	}
	if c.err != nil {
		return 0, c.err
	}
	if len(c.buf)+len(p) > batchFlushAt {
		c.flushLocked()
		if c.err != nil {
			return 0, c.err
		}
	}
	c.buf = append(c.buf, p...)
	return len(p), nil
}

// flushLocked writes the pending bytes; c.mu is held.
func (c *batchConn) flushLocked() {
	if len(c.buf) > 0 && c.err == nil {
		_, c.err = c.Conn.Write(c.buf)
	}
	c.buf = c.buf[:0]
}

// begin starts collecting writes.
func (c *batchConn) begin() {
	c.mu.Lock()
	c.batching = true
	c.mu.Unlock()
}

// end writes what the batch collected and stops collecting; it returns the batch's
// first write error.
func (c *batchConn) end() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.flushLocked()
	err := c.err
	c.batching, c.err = false, nil
	if cap(c.buf) > batchFlushAt {
		c.buf = nil
	}
	return err
}

// batchedWS is the MessageConn of a DialLocal client: each message is written as one
// batch of its TCP connection.
type batchedWS struct {
	*wsmsg.Conn
	raw *batchConn
}

func (w *batchedWS) WriteMessage(ctx context.Context, msg []byte) error {
	w.raw.begin()
	err := w.Conn.WriteMessage(ctx, msg)
	if ferr := w.raw.end(); err == nil && ferr != nil {
		err = fmt.Errorf("writing websocket message: %w", ferr)
	}
	return err
}

// batchingHTTPClient returns an HTTP client for one WebSocket dial whose connection is a
// batchConn, stored in *got once dialled. Proxies from the environment apply as with
// http.DefaultClient.
func batchingHTTPClient(got *atomic.Pointer[batchConn]) *http.Client {
	var d net.Dialer
	return &http.Client{Transport: &http.Transport{
		Proxy: http.ProxyFromEnvironment,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			nc, err := d.DialContext(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			bc := &batchConn{Conn: nc}
			got.Store(bc)
			return bc, nil
		},
	}}
}
