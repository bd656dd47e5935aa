package serve

import (
	"context"
	"errors"
	"fmt"

	"net"

	"github.com/coder/websocket"
)

// wsConn adapts a coder/websocket connection to jsonrpc.MessageConn: Text and Binary
// frames are both accepted; replies go out as Text.
type wsConn struct{ c *websocket.Conn }

func (w wsConn) ReadMessage(ctx context.Context) ([]byte, error) {
	_, b, err := w.c.Read(ctx)
	if err != nil {
		return nil, fmt.Errorf("reading websocket message: %w", err)
	}
	return b, nil
}

func (w wsConn) WriteMessage(ctx context.Context, msg []byte) error {
	if err := w.c.Write(ctx, websocket.MessageText, msg); err != nil {
		return fmt.Errorf("writing websocket message: %w", err)
	}
	return nil
}

func (w wsConn) Close() error {
	err := w.c.Close(websocket.StatusNormalClosure, "")
	if errors.Is(err, net.ErrClosed) {
		return nil
	}
	return err
}
