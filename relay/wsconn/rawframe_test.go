package wsconn_test

import (
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/execlab/executor/relay/wsconn"
)

// TestWriteFrameSplit_WithPingsInterleaved: a dialled ws:// Conn writes its binary frames
// itself (rawframe.go) while the websocket library writes pings and pongs to the same
// socket. The server (coder/websocket, which checks masking and framing) reads every message
// exactly, in order, and the pings keep arriving, answered, in between.
func TestWriteFrameSplit_WithPingsInterleaved(t *testing.T) {
	var pings atomic.Int32
	conns := make(chan *websocket.Conn, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, &websocket.AcceptOptions{OnPingReceived: func(context.Context, []byte) bool {
			pings.Add(1)
			return true
		}})
		if err != nil {
			return
		}
		c.SetReadLimit(1 << 20)
		conns <- c
	}))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := wsconn.Dial(ctx, "ws"+strings.TrimPrefix(srv.URL, "http")+"/rendezvous",
		&wsconn.DialOptions{Conn: &wsconn.Options{PingInterval: time.Millisecond, PongTimeout: 10 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if !wsconn.WritesRawFrames(c) {
		t.Fatal("a ws:// dial does not write its frames itself")
	}
	server := <-conns
	defer server.CloseNow()

	kctx, kcancel := context.WithCancel(ctx)
	done := make(chan struct{}, 2)
	go func() { // Pongs are seen only while a ReadFrame runs
		defer func() { done <- struct{}{} }()
		_, _ = c.ReadFrame(kctx)
	}()
	go func() {
		defer func() { done <- struct{}{} }()
		_ = c.Keepalive(kctx)
	}()

	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 2))
	const frames = 300
	sent := make(chan []byte, frames)
	go func() {
		defer close(sent)
		for range frames {
			msg := make([]byte, 1+rng.IntN(70_000))
			for i := range msg {
				msg[i] = byte(rng.Uint32())
			}
			cut := rng.IntN(len(msg) + 1)
			if err := c.WriteFrameSplit(ctx, msg[:cut], msg[cut:]); err != nil {
				t.Errorf("WriteFrameSplit: %v", err)
				return
			}
			sent <- msg
		}
	}()
	n := 0
	for want := range sent {
		typ, got, err := server.Read(ctx)
		if err != nil || typ != websocket.MessageBinary || !bytes.Equal(got, want) {
			t.Fatalf("message %d: server read %d bytes (type %v, err %v), want %d binary bytes", n, len(got), typ, err, len(want))
		}
		n++
	}
	if n != frames {
		t.Fatalf("server read %d messages, want %d", n, frames)
	}
	if pings.Load() == 0 {
		t.Errorf("no ping reached the server while frames were written")
	}
	if got := c.Reason(); got != wsconn.ReasonNone {
		t.Errorf("Reason: got %v, want none", got)
	}
	kcancel()
	c.Close() // ends the ReadFrame (coder/websocket reads cannot be abandoned by ctx alone)
	<-done
	<-done
}

// TestWriteFrameSplit_CanceledWriteFailsConn: a raw write blocked on a peer that does not
// read gives up once its ctx ends, and fails the Conn (write_error).
func TestWriteFrameSplit_CanceledWriteFailsConn(t *testing.T) {
	c, server := dialPair(t, nil)
	_ = server // never read: the socket buffers fill and the writes block
	ctx, cancel := context.WithCancel(context.Background())
	errc := writeUntilBlockedFails(ctx, c)
	// Let the writes fill the socket buffers, then cancel the blocked one.
	timer := time.NewTimer(200 * time.Millisecond)
	defer timer.Stop()
	select {
	case err := <-errc:
		t.Fatalf("writes ended before the cancel: %v", err)
	case <-timer.C:
	}
	cancel()
	select {
	case err := <-errc:
		if err == nil || !errors.Is(err, context.Canceled) {
			t.Fatalf("got %v, want an error wrapping context.Canceled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the blocked write did not give up after its ctx ended")
	}
	if got := c.Reason(); got != wsconn.ReasonWriteError {
		t.Errorf("Reason: got %v, want %v", got, wsconn.ReasonWriteError)
	}
}

// writeUntilBlockedFails writes full-size frames to c, whose peer does not read, until a
// write fails, and sends that error (nil if 10,000 frames, ~2.5 GiB, all went out: far
// past any socket buffer). The goroutine is the caller's: it ends once a write fails,
// which the caller makes happen (ctx or a write timeout) and waits for.
func writeUntilBlockedFails(ctx context.Context, c *wsconn.Conn) <-chan error {
	errc := make(chan error, 1)
	go func() {
		msg := make([]byte, wsconn.MaxMessageSize)
		for i := 0; i < 10_000; i++ {
			if err := c.WriteFrameSplit(ctx, msg[:100], msg[100:]); err != nil {
				errc <- err
				return
			}
		}
		errc <- nil
	}()
	return errc
}
