package harness

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"

	"github.com/coder/websocket"
)

// DialLocal connects to an executor's local WebSocket listener (the ws://IP:PORT line
// `executor serve` and `codex exec-server` print) and starts a Client on it. The
// handshake carries no Origin header (the executor refuses any). ctx bounds the dial only.
// opts may be nil. The caller still has to call Initialize.
func DialLocal(ctx context.Context, rawURL string, opts *Options) (*Client, error) {
	o := opts.withDefaults()
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("parsing executor URL: %w", err)
	}
	if u.Scheme != "ws" && u.Scheme != "wss" {
		return nil, fmt.Errorf("parsing executor URL: scheme %q, want ws or wss", u.Scheme)
	}
	c, resp, err := websocket.Dial(ctx, rawURL, &websocket.DialOptions{HTTPHeader: http.Header{}})
	if resp != nil && resp.Body != nil {
		resp.Body.Close()
	}
	if err != nil {
		return nil, fmt.Errorf("dialing executor: %w", err)
	}
	c.SetReadLimit(o.ReadLimit)
	return Open(&wsConn{c: c}, opts), nil
}

// wsConn adapts a coder/websocket connection to MessageConn: Text and Binary frames are
// both read; messages are written as Text, as the executor expects.
type wsConn struct {
	c   *websocket.Conn
	buf []byte // read buffer reused across messages; owned by the reading goroutine
}

// maxRetainedReadBuffer caps the read buffer kept between messages, so one huge message
// does not pin its memory for the life of the connection.
const maxRetainedReadBuffer = 1 << 20

// ReadMessage reads one message through a reused buffer and returns an exact-size copy:
// one allocation per message instead of the doubling growth of websocket.Conn.Read, which
// dominated the cost of large process/output streams. Not safe for concurrent use.
func (w *wsConn) ReadMessage(ctx context.Context) ([]byte, error) {
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

func (w *wsConn) WriteMessage(ctx context.Context, msg []byte) error {
	if err := w.c.Write(ctx, websocket.MessageText, msg); err != nil {
		return fmt.Errorf("writing websocket message: %w", err)
	}
	return nil
}

// Close performs the close handshake, which coder/websocket bounds by its own 5 s timeout,
// and is idempotent.
func (w *wsConn) Close() error {
	err := w.c.Close(websocket.StatusNormalClosure, "")
	// A peer that is already gone, or that drops the TCP connection instead of echoing
	// the close frame (the reference does), still leaves the connection closed.
	var ce websocket.CloseError
	if err == nil || errors.Is(err, net.ErrClosed) || errors.Is(err, io.EOF) || errors.As(err, &ce) {
		return nil
	}
	return fmt.Errorf("closing websocket: %w", err)
}
