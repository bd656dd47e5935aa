package wsmsg

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"

	"github.com/coder/websocket"
)

// maxRetainedReadBuffer caps the read buffer kept between messages, so one huge message
// does not pin its memory for the life of the connection. 2 MiB holds the largest
// fs/writeBlock request (a 1 MiB block is 1,398,104 base64 bytes plus the envelope): a
// stream of them reuses one buffer instead of growing a fresh one per message, which cost
// the server more than twice the CPU of the whole request otherwise (docs: the
// writeblock_local bench row, issue 28).
const maxRetainedReadBuffer = 2 << 20

// Conn is a message conn over one WebSocket.
type Conn struct {
	c   *websocket.Conn
	buf []byte // read buffer reused across messages; owned by the reading goroutine
}

// New wraps c.
func New(c *websocket.Conn) *Conn { return &Conn{c: c} }

// ReadMessage reads one message through a reused buffer and returns an exact-size copy:
// one allocation per message instead of the doubling growth of websocket.Conn.Read,
// which dominated the cost of large process/output streams.
func (w *Conn) ReadMessage(ctx context.Context) ([]byte, error) {
	_, r, err := w.c.Reader(ctx)
	if err != nil {
		return nil, fmt.Errorf("reading websocket message: %w", err)
	}
	buf := w.buf[:0]
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("reading websocket message: %w", err)
		}
	}
	if cap(buf) <= maxRetainedReadBuffer {
		w.buf = buf
	}
	return bytes.Clone(buf), nil
}

// WriteMessage writes msg as one Text message.
func (w *Conn) WriteMessage(ctx context.Context, msg []byte) error {
	if err := w.c.Write(ctx, websocket.MessageText, msg); err != nil {
		return fmt.Errorf("writing websocket message: %w", err)
	}
	return nil
}

// Close performs the close handshake (bounded by the library's own 5 s timeout). A peer
// that is already gone, or that drops the TCP connection instead of echoing the close
// frame (the reference does), still leaves the connection closed: no error.
func (w *Conn) Close() error {
	err := w.c.Close(websocket.StatusNormalClosure, "")
	var ce websocket.CloseError
	if err == nil || errors.Is(err, net.ErrClosed) || errors.Is(err, io.EOF) || errors.As(err, &ce) {
		return nil
	}
	return fmt.Errorf("closing websocket: %w", err)
}

// CloseNow drops the connection without a close handshake.
func (w *Conn) CloseNow() error { return w.c.CloseNow() }
