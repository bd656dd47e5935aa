package serve

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"

	"net"

	"github.com/coder/websocket"
)

// wsConn adapts a coder/websocket connection to jsonrpc.MessageConn: Text and Binary
// frames are both accepted; replies go out as Text.
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

func (w *wsConn) Close() error {
	err := w.c.Close(websocket.StatusNormalClosure, "")
	if errors.Is(err, net.ErrClosed) {
		return nil
	}
	return err
}
