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
	defer srv.Close()
	ctx := context.Background()
	ws, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(srv.URL, "http"), nil)
	if err != nil {
		t.Fatal(err)
	}
	ws.SetReadLimit(8 << 20)
	c := wsmsg.New(ws)
	defer c.Close()
	var got [][]byte
	sizes := []int{1, 100, 70_000, 2 << 20, 5}
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
