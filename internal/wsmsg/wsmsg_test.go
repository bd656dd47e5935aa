package wsmsg_test

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/coder/websocket"
	"go.uber.org/goleak"

	"github.com/execlab/executor/internal/wsmsg"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestConn_RoundTripKeepsMessagesIndependent echoes messages of growing size, Text and
// Binary, and checks that each returned slice survives later reads (the read buffer is
// reused internally).
func TestConn_RoundTripKeepsMessagesIndependent(t *testing.T) {
	ctx := context.Background()
	ws, c := dialEcho(t)
	var got [][]byte
	sizes := []int{1, 100, 70_000, 300_000, 2 << 20, 400_000, 5, 300_000}
	for i, n := range sizes {
		msg := bytes.Repeat([]byte{byte('a' + i)}, n)
		typ := websocket.MessageText
		if i%2 == 1 {
			typ = websocket.MessageBinary
		}
		if err := ws.Write(ctx, typ, msg); err != nil {
			t.Fatal(err)
		}
		b, err := c.ReadMessage(ctx)
		if err != nil {
			t.Fatalf("message %d: %v", i, err)
		}
		got = append(got, b)
	}
	for i, n := range sizes {
		if want := bytes.Repeat([]byte{byte('a' + i)}, n); !bytes.Equal(got[i], want) {
			t.Fatalf("message %d: got %d bytes (%q…), want %d", i, len(got[i]), got[i][:min(8, len(got[i]))], n)
		}
	}
	if err := c.WriteMessage(ctx, []byte(`{"x":1}`)); err != nil {
		t.Fatal(err)
	}
	if b, err := c.ReadMessage(ctx); err != nil || string(b) != `{"x":1}` {
		t.Fatalf("got %q, %v", b, err)
	}
}

// echoServer is a 127.0.0.1 WebSocket server echoing every message with its frame type.
func echoServer(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		c.SetReadLimit(8 << 20)
		defer c.CloseNow()
		for { // echo with the same frame type until the client goes away
			typ, b, err := c.Read(r.Context())
			if err != nil {
				return
			}
			if err := c.Write(r.Context(), typ, b); err != nil {
				return
			}
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestConn_ReleasedBufferIsReused: a message of at least 256 KiB comes back in the read
// buffer itself; once given back with ReleaseMessage the next large message is read into
// the same storage, while a small message is still an independent copy.
func TestConn_ReleasedBufferIsReused(t *testing.T) {
	ctx := context.Background()
	ws, c := dialEcho(t)
	read := func(fill byte, n int) []byte {
		t.Helper()
		if err := ws.Write(ctx, websocket.MessageText, bytes.Repeat([]byte{fill}, n)); err != nil {
			t.Fatal(err)
		}
		b, err := c.ReadMessage(ctx)
		if err != nil || len(b) != n || bytes.Count(b, []byte{fill}) != n {
			t.Fatalf("read %d×%q: %d bytes, %v", n, fill, len(b), err)
		}
		return b
	}
	a := read('a', 1_400_000)
	c.ReleaseMessage(a)
	b := read('b', 1_400_000)
	if &a[0] != &b[0] {
		t.Errorf("the released buffer was not reused")
	}
	small := read('s', 10)
	c.ReleaseMessage(small) // a copy: ignored
	c.ReleaseMessage(b)
	d := read('d', 300_000) // into the buffer the small read left, or b
	if string(small) != "ssssssssss" {
		t.Errorf("small message changed to %q", small)
	}
	e := read('e', 1_400_000) // d was not released: a fresh buffer
	if &e[0] == &d[0] || bytes.Count(d, []byte{'d'}) != len(d) {
		t.Errorf("a buffer still held by the caller was reused")
	}
}

// dialEcho dials a fresh echoServer and wraps the client end; both close at cleanup.
func dialEcho(t *testing.T) (*websocket.Conn, *wsmsg.Conn) {
	srv := echoServer(t)
	ws, _, err := websocket.Dial(context.Background(), "ws"+strings.TrimPrefix(srv.URL, "http"), nil)
	if err != nil {
		t.Fatal(err)
	}
	ws.SetReadLimit(8 << 20)
	c := wsmsg.New(ws)
	t.Cleanup(func() { c.Close() })
	return ws, c
}

// TestConn_ReadMessageArrivingShowsGrowingPrefixes: a large message is shown to seen as
// it arrives, each time a longer prefix of the message, and comes back whole.
func TestConn_ReadMessageArrivingShowsGrowingPrefixes(t *testing.T) {
	ctx := context.Background()
	ws, c := dialEcho(t)
	msg := make([]byte, 3<<20)
	for i := range msg {
		msg[i] = byte(i * 31)
	}
	if err := ws.Write(ctx, websocket.MessageBinary, msg); err != nil {
		t.Fatal(err)
	}
	var lens []int
	b, err := c.ReadMessageArriving(ctx, func(sofar []byte) {
		if !bytes.Equal(sofar, msg[:len(sofar)]) {
			t.Errorf("prefix of %d bytes differs from the message", len(sofar))
		}
		lens = append(lens, len(sofar))
	})
	if err != nil || !bytes.Equal(b, msg) {
		t.Fatalf("got %d bytes, %v; want the %d-byte message", len(b), err, len(msg))
	}
	if len(lens) < 2 {
		t.Fatalf("seen called %d times for a 3 MiB message, want several", len(lens))
	}
	for i := 1; i < len(lens); i++ {
		if lens[i] <= lens[i-1] {
			t.Fatalf("prefix lengths do not grow: %v", lens)
		}
	}
}
