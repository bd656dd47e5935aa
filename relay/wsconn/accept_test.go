package wsconn_test

import (
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/execlab/executor/relay/wsconn"
)

// acceptPair accepts a Conn from a coder/websocket client (which checks framing: a server
// frame must not be masked) on a loopback ws:// server, and checks that the Conn writes
// its frames itself.
func acceptPair(t *testing.T, opts *wsconn.Options, dopts *websocket.DialOptions) (*wsconn.Conn, *websocket.Conn) {
	t.Helper()
	c, client := accept(t, false, opts, dopts)
	if !wsconn.WritesRawFrames(c) || !wsconn.IsServerConn(c) {
		t.Fatal("an accepted ws:// conn does not write its (unmasked) frames itself")
	}
	return c, client
}

// accept serves one wsconn.Accept on a loopback server, wss:// when tlsOn (the client then
// trusts the server's certificate), and dials it with dopts; the client reads messages
// up to 1 MiB. The server, the Conn and the client are closed at tb's cleanup.
func accept(tb testing.TB, tlsOn bool, opts *wsconn.Options, dopts *websocket.DialOptions) (*wsconn.Conn, *websocket.Conn) {
	tb.Helper()
	conns := make(chan *wsconn.Conn, 1)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := wsconn.Accept(w, r, &wsconn.AcceptOptions{Conn: opts})
		if err != nil {
			return
		}
		conns <- c
	})
	var srv *httptest.Server
	if tlsOn {
		srv = httptest.NewTLSServer(h)
	} else {
		srv = httptest.NewServer(h)
	}
	tb.Cleanup(srv.Close)
	u := "ws" + strings.TrimPrefix(srv.URL, "http")
	if tlsOn {
		d := websocket.DialOptions{}
		if dopts != nil {
			d = *dopts
		}
		d.HTTPClient = srv.Client()
		dopts = &d
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	client, _, err := websocket.Dial(ctx, u, dopts)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { client.CloseNow() })
	client.SetReadLimit(1 << 20)
	c := <-conns
	tb.Cleanup(func() { c.Close() })
	return c, client
}

// TestAcceptedWriteFrameSplit_PingsPongsAndClose: an accepted Conn writes its binary frames
// itself (unmasked, header, head and tail in one writev) while the websocket library writes
// the Conn's keepalive pings, its pongs to the client's pings, and finally the echo of the
// client's close frame to the same socket. The client (coder/websocket, which rejects a
// masked server frame and checks the length encoding) reads every message exactly, in
// order: every length class (≤ 125, 126..65535, ≥ 65536) and random lengths and splits.
func TestAcceptedWriteFrameSplit_PingsPongsAndClose(t *testing.T) {
	var pings atomic.Int32
	c, client := acceptPair(t, &wsconn.Options{PingInterval: time.Millisecond, PongTimeout: 10 * time.Second},
		&websocket.DialOptions{OnPingReceived: func(context.Context, []byte) bool { pings.Add(1); return true }})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	done := make(chan error, 2)
	go func() { // reads the pongs and the client's pings and close
		_, err := c.ReadFrame(ctx)
		done <- err
	}()
	kctx, kcancel := context.WithCancel(ctx)
	go func() { done <- c.Keepalive(kctx) }()

	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 3))
	lengths := []int{0, 1, 125, 126, 127, 0xffff, 0x10000, 61516, wsconn.MaxMessageSize}
	for range 300 {
		lengths = append(lengths, rng.IntN(70_000))
	}
	sent := make(chan []byte, len(lengths))
	pingDone := make(chan struct{})
	go func() {
		defer close(sent)
		for i, n := range lengths {
			if i == len(lengths)-1 {
				<-pingDone // the client reads (and so gets its pongs) until the last frame
			}
			msg := make([]byte, n)
			for i := range msg {
				msg[i] = byte(rng.Uint32())
			}
			cut := rng.IntN(n + 1)
			if err := c.WriteFrameSplit(ctx, msg[:cut], msg[cut:]); err != nil {
				t.Errorf("WriteFrameSplit: %v", err)
				return
			}
			sent <- msg
		}
	}()
	var pongs atomic.Int32
	go func() { // the client pings the server: its pongs are written between our frames
		defer close(pingDone)
		for range 50 {
			if err := client.Ping(ctx); err != nil {
				return
			}
			pongs.Add(1)
		}
	}()
	n := 0
	for range lengths {
		typ, got, err := client.Read(ctx) // reading also answers pings and takes pongs
		want, ok := <-sent
		if !ok {
			t.Fatalf("the writer stopped after %d messages", n)
		}
		if err != nil || typ != websocket.MessageBinary || !bytes.Equal(got, want) {
			t.Fatalf("message %d: client read %d bytes (type %v, err %v), want %d binary bytes", n, len(got), typ, err, len(want))
		}
		n++
	}
	if n != len(lengths) {
		t.Fatalf("client read %d messages, want %d", n, len(lengths))
	}
	kcancel()
	if pings.Load() == 0 {
		t.Errorf("no keepalive ping reached the client while frames were written")
	}
	if pongs.Load() == 0 {
		t.Errorf("no pong answered the client's pings while frames were written")
	}
	if got := c.Reason(); got != wsconn.ReasonNone {
		t.Errorf("Reason: got %v, want none", got)
	}
	c.Close() // (a canceled ping write makes the library close the conn: close first)
	<-done
	<-done
}

// TestAcceptedWriteFrameSplit_CloseEcho: while the Conn writes frames, the client starts the
// close handshake; the library's echo of its close frame goes out between two of the Conn's
// own frames, and the client, reading past the frames still in flight, gets it intact.
func TestAcceptedWriteFrameSplit_CloseEcho(t *testing.T) {
	c, client := acceptPair(t, nil, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	readErr := make(chan error, 1)
	go func() {
		_, err := c.ReadFrame(ctx)
		readErr <- err
	}()
	writes := make(chan int, 1)
	go func() {
		msg := make([]byte, 61516)
		n := 0
		for ; n < 100_000; n++ { // until the conn closes; bounded
			if err := c.WriteFrame(ctx, msg); err != nil {
				break
			}
		}
		writes <- n
	}()
	// Let frames flow first.
	for range 20 {
		if _, _, err := client.Read(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if err := client.Close(websocket.StatusNormalClosure, "bye"); err != nil {
		t.Errorf("client Close: %v (the server's close echo did not arrive intact)", err)
	}
	if err := <-readErr; websocket.CloseStatus(err) != websocket.StatusNormalClosure {
		t.Errorf("server ReadFrame: got %v, want the client's close", err)
	}
	if n := <-writes; n < 20 {
		t.Errorf("only %d frames written", n)
	}
}

// TestAcceptedWrite_SlowClientFailsConn: a raw write blocked on a client that does not read
// gives up at WriteTimeout, or as soon as its ctx ends, and fails the Conn (write_error).
func TestAcceptedWrite_SlowClientFailsConn(t *testing.T) {
	for _, how := range []string{"timeout", "cancel"} {
		t.Run(how, func(t *testing.T) {
			opts := &wsconn.Options{}
			if how == "timeout" {
				opts.WriteTimeout = 300 * time.Millisecond
			}
			c, _ := acceptPair(t, opts, nil) // the client never reads
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			errc := writeUntilBlockedFails(ctx, c)
			if how == "cancel" {
				select {
				case err := <-errc:
					t.Fatalf("writes ended before the cancel: %v", err)
				case <-time.After(200 * time.Millisecond):
				}
				cancel()
			}
			select {
			case err := <-errc:
				want := error(context.Canceled)
				if how == "timeout" {
					want = os.ErrDeadlineExceeded
				}
				if err == nil || !errors.Is(err, want) {
					t.Fatalf("got %v, want an error wrapping %v", err, want)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("the blocked write did not give up")
			}
			if got := c.Reason(); got != wsconn.ReasonWriteError {
				t.Errorf("Reason: got %v, want %v", got, wsconn.ReasonWriteError)
			}
		})
	}
}

// TestAccept_TLSWritesThroughLibrary: over TLS (wss) the Conn keeps the library's write
// path, and frames round-trip.
func TestAccept_TLSWritesThroughLibrary(t *testing.T) {
	c, client := accept(t, true, nil, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if wsconn.WritesRawFrames(c) {
		t.Fatal("a TLS conn writes raw frames under the TLS layer")
	}
	for _, n := range []int{1, 126, 0x10000} {
		msg := bytes.Repeat([]byte{byte(n)}, n)
		if err := c.WriteFrameSplit(ctx, msg[:n/2], msg[n/2:]); err != nil {
			t.Fatal(err)
		}
		typ, got, err := client.Read(ctx)
		if err != nil || typ != websocket.MessageBinary || !bytes.Equal(got, msg) {
			t.Fatalf("client read %d bytes (type %v, err %v), want %d", len(got), typ, err, n)
		}
	}
}
