package wsconn_test

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/coder/websocket"

	"github.com/execlab/executor/relay/wsconn"

	"github.com/execlab/executor/relay/frame"
)

// peer is the server end of a test websocket: a raw coder/websocket conn the test drives.
type peer struct {
	srv   *httptest.Server
	conns chan *websocket.Conn
	reqs  chan *http.Request
}

func newPeer(t *testing.T, status int) *peer {
	p := &peer{conns: make(chan *websocket.Conn, 4), reqs: make(chan *http.Request, 4)}
	p.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.reqs <- r.Clone(context.Background())
		if status != 0 {
			http.Error(w, "rejected body with secret-ish text", status)
			return
		}
		c, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		c.SetReadLimit(1 << 20)
		p.conns <- c
	}))
	t.Cleanup(func() {
		p.srv.Close()
		for {
			select {
			case c := <-p.conns:
				c.CloseNow()
			default:
				return
			}
		}
	})
	return p
}

func (p *peer) url(query string) string {
	return "ws" + strings.TrimPrefix(p.srv.URL, "http") + "/rendezvous?" + query
}

func dialPair(t *testing.T, opts *wsconn.Options) (*wsconn.Conn, *websocket.Conn) {
	t.Helper()
	p := newPeer(t, 0)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := wsconn.Dial(ctx, p.url("sig=abc"), &wsconn.DialOptions{Conn: opts})
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c, <-p.conns
}

func TestConn_RoundTripBinary(t *testing.T) {
	c, srv := dialPair(t, nil)
	ctx := context.Background()
	for _, n := range []int{1, 100, 61508, wsconn.MaxMessageSize} {
		msg := bytes.Repeat([]byte{byte(n)}, n)
		if err := c.WriteFrame(ctx, msg); err != nil {
			t.Fatalf("WriteFrame(%d): %v", n, err)
		}
		typ, got, err := srv.Read(ctx)
		if err != nil || typ != websocket.MessageBinary || !bytes.Equal(got, msg) {
			t.Fatalf("server read %d bytes (type %v, err %v), want %d binary bytes", len(got), typ, err, n)
		}
		if err := srv.Write(ctx, websocket.MessageBinary, msg); err != nil {
			t.Fatal(err)
		}
		got, err = c.ReadFrame(ctx)
		if err != nil || !bytes.Equal(got, msg) {
			t.Fatalf("ReadFrame: got %d bytes, err %v; want %d bytes", len(got), err, n)
		}
		// Small messages are exactly sized; larger ones may keep their read buffer, at
		// most twice their length.
		if n < 32<<10 && cap(got) != len(got) || cap(got) > 2*len(got) {
			t.Errorf("ReadFrame returned cap %d for len %d, want exactly sized below 32 KiB, at most 2× above", cap(got), len(got))
		}
	}
	if got, want := c.Reason(), wsconn.ReasonNone; got != want {
		t.Errorf("Reason: got %v, want %v", got, want)
	}
}

// TestConn_ReleaseFrame: a released full-record message's buffer serves a later read, and
// a message still held is never overwritten by later reads.
func TestConn_ReleaseFrame(t *testing.T) {
	c, srv := dialPair(t, nil)
	ctx := context.Background()
	var held [][]byte
	for i := range 8 {
		msg := bytes.Repeat([]byte{byte(i + 1)}, 61508)
		if err := srv.Write(ctx, websocket.MessageBinary, msg); err != nil {
			t.Fatal(err)
		}
		got, err := c.ReadFrame(ctx)
		if err != nil || !bytes.Equal(got, msg) {
			t.Fatalf("ReadFrame %d: got %d bytes, err %v", i, len(got), err)
		}
		if i%2 == 0 {
			wsconn.ReleaseFrame(got)
		} else {
			held = append(held, got)
		}
	}
	for j, b := range held {
		if want := bytes.Repeat([]byte{byte(2*j + 2)}, 61508); !bytes.Equal(b, want) {
			t.Fatalf("held message %d changed after later reads", 2*j+1)
		}
	}
	wsconn.ReleaseFrame(nil)               // not pooled: ignored
	wsconn.ReleaseFrame(make([]byte, 100)) // likewise
}

// TestConn_ReadFrameAllocs pins the read path's allocations: a full-record message read
// into a released buffer allocates nothing of its size.
func TestConn_ReadFrameAllocs(t *testing.T) {
	c, srv := dialPair(t, nil)
	ctx := context.Background()
	msg := make([]byte, 61508)
	const n = 50
	go func() {
		for range n + 1 {
			if srv.Write(ctx, websocket.MessageBinary, msg) != nil {
				return
			}
		}
	}()
	var bytesBefore, bytesAfter runtime.MemStats
	b, err := c.ReadFrame(ctx)
	if err != nil {
		t.Fatal(err)
	}
	wsconn.ReleaseFrame(b)
	runtime.ReadMemStats(&bytesBefore)
	for range n {
		b, err := c.ReadFrame(ctx)
		if err != nil {
			t.Fatal(err)
		}
		wsconn.ReleaseFrame(b)
	}
	runtime.ReadMemStats(&bytesAfter)
	// Far less than one message per read (a copy per read would be ≥ 3 MB here); the
	// websocket library and the test's writer goroutine allocate a little.
	limit := uint64(n * len(msg) / 4)
	if raceEnabled {
		limit *= 3 // sync.Pool drops a quarter of what is put back
	}
	if got := bytesAfter.TotalAlloc - bytesBefore.TotalAlloc; got > limit {
		t.Errorf("%d reads of released 61,508-byte messages allocated %d bytes, want < %d", n, got, limit)
	}
}

func TestConn_TextDroppedConnStays(t *testing.T) {
	c, srv := dialPair(t, nil)
	ctx := context.Background()
	if err := srv.Write(ctx, websocket.MessageText, []byte("hello")); err != nil {
		t.Fatal(err)
	}
	if err := srv.Write(ctx, websocket.MessageBinary, []byte{1, 2}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.ReadFrame(ctx); !errors.Is(err, frame.ErrNonBinary) {
		t.Fatalf("ReadFrame of a text message: got %v, want ErrNonBinary", err)
	}
	got, err := c.ReadFrame(ctx)
	if err != nil || !bytes.Equal(got, []byte{1, 2}) {
		t.Fatalf("ReadFrame after text: got %x, %v; want 0102", got, err)
	}
}

func TestConn_OversizedMessageFailsConn(t *testing.T) {
	c, srv := dialPair(t, nil)
	ctx := context.Background()
	go srv.Write(ctx, websocket.MessageBinary, make([]byte, wsconn.MaxMessageSize+1))
	_, err := c.ReadFrame(ctx)
	if !errors.Is(err, wsconn.ErrMessageTooLarge) {
		t.Fatalf("ReadFrame of 256 KiB + 1: got %v, want ErrMessageTooLarge", err)
	}
	if got, want := c.Reason(), wsconn.ReasonReadError; got != want {
		t.Errorf("Reason: got %v, want %v", got, want)
	}
	if err := c.WriteFrame(ctx, make([]byte, wsconn.MaxMessageSize+1)); !errors.Is(err, wsconn.ErrMessageTooLarge) {
		t.Errorf("WriteFrame of 256 KiB + 1: got %v, want ErrMessageTooLarge", err)
	}
}

func TestConn_PeerCloseAndLocalClose(t *testing.T) {
	c, srv := dialPair(t, nil)
	ctx := context.Background()
	go srv.Close(websocket.StatusNormalClosure, "bye")
	if _, err := c.ReadFrame(ctx); err == nil {
		t.Fatal("ReadFrame after peer close: got nil error")
	}
	if got, want := c.Reason(), wsconn.ReasonPeerClose; got != want {
		t.Errorf("Reason: got %v, want %v", got, want)
	}

	c2, _ := dialPair(t, nil)
	c2.Close()
	if _, err := c2.ReadFrame(ctx); !errors.Is(err, wsconn.ErrClosed) {
		t.Errorf("ReadFrame after Close: got %v, want ErrClosed", err)
	}
	if got, want := c2.Reason(), wsconn.ReasonLocalShutdown; got != want {
		t.Errorf("Reason: got %v, want %v", got, want)
	}
	select {
	case <-c2.Done():
	default:
		t.Error("Done not closed after Close")
	}
}

// TestKeepalive_PongTimeoutDropsConn: a peer that never answers Pings is dropped exactly
// one interval plus the pong deadline after the keepalive starts (fake clock).
func TestKeepalive_PongTimeoutDropsConn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// The server never reads, so it never answers Pings.
		c, _, _ := memPair(t, &wsconn.Options{PingInterval: 20 * time.Millisecond, PongTimeout: 60 * time.Millisecond}, true)
		ctx := context.Background()
		readDone := make(chan error, 1)
		go func() { _, err := c.ReadFrame(ctx); readDone <- err }()
		start := time.Now()
		if err := c.Keepalive(ctx); !errors.Is(err, wsconn.ErrPongTimeout) {
			t.Fatalf("Keepalive: got %v, want ErrPongTimeout", err)
		}
		if el := time.Since(start); el != 80*time.Millisecond {
			t.Errorf("pong timeout after %v, want interval + deadline (80ms)", el)
		}
		if got, want := c.Reason(), wsconn.ReasonPongTimeout; got != want {
			t.Errorf("Reason: got %v, want %v", got, want)
		}
		if err := <-readDone; err == nil {
			t.Error("ReadFrame after pong timeout: got nil error")
		}
	})
}

// TestKeepalive_AnsweredPingsKeepConn: fifteen ping rounds (fake clock), each answered, leave
// the conn open; cancelling ctx ends Keepalive with nil.
func TestKeepalive_AnsweredPingsKeepConn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const interval, rounds = 10 * time.Millisecond, 15
		c, srv, pings := memPair(t, &wsconn.Options{PingInterval: interval, PongTimeout: 200 * time.Millisecond}, false)
		ctx, cancel := context.WithCancel(context.Background())
		srv.CloseRead(ctx) // the server answers Pings while reading
		readDone := make(chan error, 1)
		go func() { _, err := c.ReadFrame(ctx); readDone <- err }()
		kaDone := make(chan error, 1)
		go func() { kaDone <- c.Keepalive(ctx) }()
		time.Sleep(rounds*interval + interval/2) // fake time: exactly 15 ping rounds
		synctest.Wait()
		if got := pings.Load(); got != rounds {
			t.Errorf("pings answered: got %d, want %d", got, rounds)
		}
		if got := c.Reason(); got != wsconn.ReasonNone {
			t.Fatalf("Reason after answered pings: got %v, want none", got)
		}
		cancel()
		if err := <-kaDone; err != nil {
			t.Errorf("Keepalive after ctx cancel: got %v, want nil", err)
		}
		c.Close()
		<-readDone
	})
}

func TestDial_RejectedUpgradeStatusAndRedaction(t *testing.T) {
	for _, status := range []int{401, 403, 404, 429, 500, 502} {
		p := newPeer(t, status)
		_, err := wsconn.Dial(context.Background(), p.url("sig=SECRET-SIG"), nil)
		var de *wsconn.DialError
		if !errors.As(err, &de) {
			t.Fatalf("status %d: got %v, want *DialError", status, err)
		}
		if de.StatusCode != status {
			t.Errorf("StatusCode: got %d, want %d", de.StatusCode, status)
		}
		if got, want := de.IsClientError(), status < 500; got != want {
			t.Errorf("status %d IsClientError: got %v, want %v", status, got, want)
		}
		if strings.Contains(err.Error(), "SECRET") || strings.Contains(err.Error(), "rejected body") {
			t.Errorf("error text leaks query or body: %q", err)
		}
	}
}

func TestDial_NetworkErrorRedacted(t *testing.T) {
	_, err := wsconn.Dial(context.Background(), "ws://127.0.0.1:1/rendezvous?sig=SECRET-SIG", nil)
	var de *wsconn.DialError
	if !errors.As(err, &de) || de.StatusCode != 0 {
		t.Fatalf("got %v, want *DialError with status 0", err)
	}
	if strings.Contains(err.Error(), "SECRET") {
		t.Errorf("error text leaks the sig query: %q", err)
	}
}

func TestDial_RequestHeaders(t *testing.T) {
	p := newPeer(t, 0)
	h := http.Header{}
	h.Set("x-request-id", "req_0123456789abcdef0123456789abcdef")
	c, err := wsconn.Dial(context.Background(), p.url("sig=abc"), &wsconn.DialOptions{Header: h})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	r := <-p.reqs
	if got, want := r.URL.RawQuery, "sig=abc"; got != want {
		t.Errorf("query: got %q, want %q (verbatim)", got, want)
	}
	if got := r.Header.Get("X-Request-Id"); got != "req_0123456789abcdef0123456789abcdef" {
		t.Errorf("x-request-id: got %q", got)
	}
	for _, name := range []string{"Authorization", "Origin", "Sec-Websocket-Protocol"} {
		if v := r.Header.Get(name); v != "" {
			t.Errorf("header %s: got %q, want none", name, v)
		}
	}
}

func TestRedactURL(t *testing.T) {
	tests := []struct{ in, want string }{
		{"wss://u:p@rv.example/a/b?sig=x#f", "wss://rv.example/a/b"},
		{"ws://127.0.0.1:9/r", "ws://127.0.0.1:9/r"},
		{"::bad", "<invalid url>"},
	}
	for _, tt := range tests {
		if got := wsconn.RedactURL(tt.in); got != tt.want {
			t.Errorf("RedactURL(%q): got %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestBackoff_Schedule(t *testing.T) {
	var b wsconn.Backoff
	bases := []time.Duration{1, 2, 4, 8, 16, 30, 30}
	for i, base := range bases {
		base *= time.Second
		d := b.Next()
		if d < base/2 || d > base {
			t.Errorf("attempt %d: got %v, want in [%v, %v]", i, d, base/2, base)
		}
	}
	b.Reset()
	if d := b.Next(); d < 500*time.Millisecond || d > time.Second {
		t.Errorf("after Reset: got %v, want in [500ms, 1s]", d)
	}
}

// TestKeepalive_ParkedReaderGrace: with ParkedReaderGrace, a missing Pong while the caller
// is not reading (back-pressure: Pongs cannot be seen) does not drop the conn, however long
// that lasts; once a ReadFrame runs again and the peer stays silent, the conn is dropped
// within two pong deadlines. Without it (the executor's reference rule) the same parked
// reader is dropped at interval + deadline.
func TestKeepalive_ParkedReaderGrace(t *testing.T) {
	const interval, deadline = 20 * time.Millisecond, 60 * time.Millisecond
	synctest.Test(t, func(t *testing.T) {
		c, _, _ := memPair(t, &wsconn.Options{PingInterval: interval, PongTimeout: deadline, ParkedReaderGrace: true}, true)
		ctx := context.Background()
		kaDone := make(chan error, 1)
		go func() { kaDone <- c.Keepalive(ctx) }()
		time.Sleep(50 * deadline) // parked: nobody reads
		synctest.Wait()
		if got := c.Reason(); got != wsconn.ReasonNone {
			t.Fatalf("parked reader: conn dropped (%v), want it kept", got)
		}
		resumed := time.Now()
		readDone := make(chan error, 1)
		go func() { _, err := c.ReadFrame(ctx); readDone <- err }()
		if err := <-kaDone; !errors.Is(err, wsconn.ErrPongTimeout) {
			t.Fatalf("Keepalive: got %v, want ErrPongTimeout once the reader runs", err)
		}
		if el := time.Since(resumed); el > 2*deadline {
			t.Errorf("dropped %v after the reader resumed, want at most two pong deadlines (%v)", el, 2*deadline)
		}
		<-readDone
	})
	synctest.Test(t, func(t *testing.T) {
		c, _, _ := memPair(t, &wsconn.Options{PingInterval: interval, PongTimeout: deadline}, true)
		start := time.Now()
		if err := c.Keepalive(context.Background()); !errors.Is(err, wsconn.ErrPongTimeout) {
			t.Fatalf("Keepalive without the grace: got %v, want ErrPongTimeout", err)
		}
		if el := time.Since(start); el != interval+deadline {
			t.Errorf("without the grace a parked reader is dropped after %v, want %v", el, interval+deadline)
		}
	})
}
