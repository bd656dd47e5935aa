package initiator

// The scripted websocket peer the tests run a Stream against.

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/coder/websocket"

	"github.com/execlab/executor/relay/frame"
	"github.com/execlab/executor/relay/wsconn"
)

// maxRecordLen is the largest sealed Noise record (noise/channel.MaxRecordLen: 61,440
// plaintext bytes + a 16-byte tag), spelled out because the relay does not import noise.
const maxRecordLen = 61440 + 16

// scriptedPeer serves one websocket with script and returns the initiator's Stream
// on it (offering ARQ when offer).
func scriptedPeer(t *testing.T, offer bool, script func(ctx context.Context, c *websocket.Conn) error) (*Stream, chan error) {
	t.Helper()
	done := make(chan error, 1)
	stop := make(chan struct{})
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, nil)
		if err != nil {
			done <- err
			return
		}
		defer c.CloseNow()
		done <- script(r.Context(), c)
		<-stop
	}))
	ws, err := wsconn.Dial(context.Background(), "ws"+ts.URL[len("http"):], nil)
	if err != nil {
		t.Fatal(err)
	}
	rc := newStream(ws, Options{StreamID: "s-1", OfferARQ: offer})
	t.Cleanup(func() { rc.Close(); close(stop); ts.Close() })
	return rc, done
}

func readFrameFrom(ctx context.Context, c *websocket.Conn) (frame.Frame, error) {
	_, b, err := c.Read(ctx)
	if err != nil {
		return frame.Frame{}, err
	}
	var f frame.Frame
	err = frame.Decode(&f, b)
	return f, err
}

func writeFrameTo(ctx context.Context, c *websocket.Conn, f frame.Frame) error {
	f.Version, f.StreamID = frame.Version, "s-1"
	b, err := frame.Encode(nil, &f)
	if err != nil {
		return err
	}
	return c.Write(ctx, websocket.MessageBinary, b)
}

func binFrame(stream string, body frame.Body) func(*websocket.Conn) error {
	return func(c *websocket.Conn) error {
		b, err := frame.EncodeUnvalidated(nil, &frame.Frame{Version: frame.Version, StreamID: stream, Body: body})
		if err != nil {
			return err
		}
		return c.Write(context.Background(), websocket.MessageBinary, b)
	}
}
