package wsmsg

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"

	"github.com/coder/websocket"
)

// maxRetainedReadBuffer caps the read buffer kept between messages, so one huge message
// does not pin its memory for the life of the connection. 2 MiB holds the largest
// fs/writeBlock request (a 1 MiB block is 1,398,104 base64 bytes plus the envelope): a
// stream of them reuses one buffer instead of growing a fresh one per message, which cost
// the server more than twice the CPU of the whole request otherwise (docs: the
// writeblock_local bench row, issue 28).
const maxRetainedReadBuffer = 2 << 20

// handOutMin is the smallest message ReadMessage returns in its own read buffer instead
// of an exact-size copy: below it the copy is cheap and keeps a small message from
// pinning a large buffer; above it (fs/writeBlock requests of up to 1.4 MB, large
// responses on the harness side) the copy cost 14 % of the server's CPU per request.
const handOutMin = 256 << 10

// Conn is a message conn over one WebSocket.
type Conn struct {
	c   *websocket.Conn
	buf []byte // read buffer reused across messages; owned by the reading goroutine
	// hint is the capacity of the last buffer handed out, so that the next large message
	// is read into a buffer of its size at once instead of one grown by doubling.
	hint int

	mu    sync.Mutex
	spare []byte // a handed-out buffer given back by ReleaseMessage, not yet reused
}

// New wraps c.
func New(c *websocket.Conn) *Conn { return &Conn{c: c} }

// ReadMessage reads one message through a reused buffer. A message shorter than
// handOutMin comes back as an exact-size copy (one allocation per message instead of the
// doubling growth of websocket.Conn.Read, which dominated the cost of large
// process/output streams). A longer one comes back in the read buffer itself, which then
// belongs to the caller: the caller may give it back with ReleaseMessage once nothing
// refers to it (jsonrpc does after a request whose handler keeps nothing of it), else it
// is collected and the next large message is read into a fresh buffer.
func (w *Conn) ReadMessage(ctx context.Context) ([]byte, error) {
	return w.ReadMessageArriving(ctx, nil)
}

// ReadMessageArriving is ReadMessage that calls seen (when not nil) with the bytes
// received so far after each read that did not end the message (jsonrpc.ArrivingReader):
// a large message arrives in many reads, and the caller can work on its start while the
// rest is still on the way. seen must not keep the slice.
func (w *Conn) ReadMessageArriving(ctx context.Context, seen func(sofar []byte)) ([]byte, error) {
	_, r, err := w.c.Reader(ctx)
	if err != nil {
		return nil, fmt.Errorf("reading websocket message: %w", err)
	}
	buf := w.buf[:0]
	if buf == nil {
		w.mu.Lock()
		buf, w.spare = w.spare[:0], nil
		w.mu.Unlock()
	}
	for {
		if len(buf) == cap(buf) {
			if cap(buf) == 0 && w.hint > 0 {
				buf = make([]byte, 0, w.hint)
			} else {
				buf = append(buf, 0)[:len(buf)]
			}
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("reading websocket message: %w", err)
		}
		if seen != nil && n > 0 {
			seen(buf)
		}
	}
	if len(buf) >= handOutMin {
		w.buf, w.hint = nil, min(cap(buf), maxRetainedReadBuffer)
		return buf, nil
	}
	if cap(buf) <= maxRetainedReadBuffer {
		w.buf = buf
	}
	return bytes.Clone(buf), nil
}

// ReleaseMessage gives back a buffer ReadMessage handed out (jsonrpc.MessageReleaser):
// the caller must not use data afterwards. Anything else (a copy, a buffer larger than
// maxRetainedReadBuffer) is ignored. Safe to call from any goroutine.
func (w *Conn) ReleaseMessage(data []byte) {
	if len(data) < handOutMin || cap(data) > maxRetainedReadBuffer {
		return
	}
	w.mu.Lock()
	if cap(data) > cap(w.spare) {
		w.spare = data[:0]
	}
	w.mu.Unlock()
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
