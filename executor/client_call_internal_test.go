package executor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/execlab/executor/executor/jsonrpc"
	"github.com/execlab/executor/internal/wsmsg"
)

// wsClient is a raw client over a real loopback WebSocket. Its reader goroutine owns
// reads (a read ctx that expires would close a coder/websocket conn) and ends when the
// socket closes.
type wsClient struct {
	t    *testing.T
	c    *websocket.Conn
	in   chan []byte // messages read, in order; closed when the socket is gone
	done chan struct{}
	// hold, while locked by the test, stops the reader after at most one more message:
	// a slow reader, so the socket backs up to the server.
	hold sync.Mutex
}

func dialWS(t *testing.T, url string) *wsClient {
	t.Helper()
	c, _, err := websocket.Dial(context.Background(), url, nil)
	if err != nil {
		t.Fatalf("dialing %s: %v", url, err)
	}
	c.SetReadLimit(64 << 20)
	w := &wsClient{t: t, c: c, in: make(chan []byte, 1<<16), done: make(chan struct{})}
	go func() { // reader: ends when the socket closes
		defer close(w.done)
		defer close(w.in)
		for {
			_, b, err := c.Read(context.Background())
			if err != nil {
				return
			}
			w.hold.Lock() // wait while the test holds it
			w.in <- b
			w.hold.Unlock()
		}
	}()
	t.Cleanup(func() {
		_ = c.CloseNow()
		<-w.done
	})
	return w
}

func (w *wsClient) send(msg string) {
	w.t.Helper()
	if err := w.c.Write(context.Background(), websocket.MessageText, []byte(msg)); err != nil {
		w.t.Fatalf("sending %s: %v", msg, err)
	}
}

// recv returns the next message, or "" once the server closed the socket.
func (w *wsClient) recv() string {
	w.t.Helper()
	select {
	case b, ok := <-w.in:
		if !ok {
			return ""
		}
		return string(b)
	case <-time.After(10 * time.Second):
		w.t.Fatal("no message within 10 s")
	}
	return ""
}

// recvUntil skips messages (process notifications, audits) until one with prefix.
func (w *wsClient) recvUntil(prefix string) string {
	w.t.Helper()
	for {
		m := w.recv()
		if m == "" || strings.HasPrefix(m, prefix) {
			return m
		}
	}
}

// handshake runs initialize (resuming when resume is set) and initialized and returns
// the session id.
func (w *wsClient) handshake(resume string) string {
	w.t.Helper()
	p := `{"clientName":"loopback"}`
	if resume != "" {
		p = fmt.Sprintf(`{"clientName":"loopback","resumeSessionId":%q}`, resume)
	}
	w.send(`{"id":0,"method":"initialize","params":` + p + `}`)
	var r struct {
		Result struct {
			SessionID string `json:"sessionId"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(w.recvUntil(`{"id":0,`)), &r); err != nil || r.Result.SessionID == "" {
		w.t.Fatalf("initialize: %v", err)
	}
	w.send(`{"method":"initialized","params":{}}`)
	return r.Result.SessionID
}

// startLoopback serves s on a real loopback WebSocket as `executor serve` does (accept,
// wsmsg, ServeConn with the peer address) and returns its ws:// URL.
func startLoopback(t *testing.T, s *Server) string {
	t.Helper()
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, &websocket.AcceptOptions{CompressionMode: websocket.CompressionDisabled})
		if err != nil {
			return
		}
		c.SetReadLimit(64 << 20)
		_ = s.ServeConn(r.Context(), wsmsg.New(c), ConnInfo{Transport: TransportWebSocket, Peer: r.RemoteAddr})
	}))
	t.Cleanup(func() {
		s.Close() // ends every ServeConn, so the handlers return
		hs.Close()
	})
	return "ws" + strings.TrimPrefix(hs.URL, "http")
}

type outcome struct {
	res json.RawMessage
	err error
}

// TestClientCall_LoopbackWebSocket runs the server→client request path over a real
// loopback WebSocket with the serve wiring: a session's ClientLink numbers requests from
// 1 per connection, enforces the 256 cap, times out from ctx and ignores the late reply,
// fails every pending call when the socket drops, reaches the resumed connection (ids
// from 1 again), drops audits under a slow reader without delaying a control
// notification, and closes the connection on a reply to an id it never issued.
func TestClientCall_LoopbackWebSocket(t *testing.T) {
	srv := NewServer(nil)
	url := startLoopback(t, srv)
	ws := dialWS(t, url)
	sid := ws.handshake("")
	states := srv.sessions.States()
	if len(states) != 1 {
		t.Fatalf("%d sessions, want 1", len(states))
	}
	st := states[0]
	link := &st.client
	var calls sync.WaitGroup
	defer calls.Wait()
	call := func(ctx context.Context) <-chan outcome {
		ch := make(chan outcome, 1)
		calls.Add(1)
		go func() { // ends with its call: answered, timed out, or the connection gone
			defer calls.Done()
			res, err := link.Call(ctx, "network/policyRequest", map[string]any{"processId": "p", "request": map[string]any{"protocol": "http", "host": "h.invalid", "port": 80}})
			ch <- outcome{res, err}
		}()
		return ch
	}
	wait := func(ch <-chan outcome) outcome {
		t.Helper()
		select {
		case o := <-ch:
			return o
		case <-time.After(10 * time.Second):
			t.Fatal("Call did not return")
		}
		return outcome{}
	}

	// Ids from 1; the reply reaches the call.
	first := call(context.Background())
	if got, want := ws.recv(), `{"id":1,"method":"network/policyRequest","params":{"processId":"p","request":{"host":"h.invalid","port":80,"protocol":"http"}}}`; got != want {
		t.Fatalf("request = %s, want %s", got, want)
	}
	ws.send(`{"id":1,"result":{"decision":{"type":"allow"}}}`)
	if o := wait(first); o.err != nil || string(o.res) != `{"decision":{"type":"allow"}}` {
		t.Fatalf("call 1 = %s, %v", o.res, o.err)
	}

	// Timeout from ctx; the late reply is ignored and the connection keeps serving.
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	second := call(ctx)
	if got := ws.recv(); !strings.HasPrefix(got, `{"id":2,"method":"network/policyRequest"`) {
		t.Fatalf("request = %s, want id 2", got)
	}
	if o := wait(second); !errors.Is(o.err, context.DeadlineExceeded) {
		t.Fatalf("call 2 err = %v, want DeadlineExceeded", o.err)
	}
	cancel()
	ws.send(`{"id":2,"result":{"decision":{"type":"allow"}}}`)
	ws.send(`{"id":10,"method":"environment/info","params":{}}`)
	if got := ws.recvUntil(`{"id":10,`); !strings.HasPrefix(got, `{"id":10,"result":`) {
		t.Fatalf("after a late reply got %q, want environment/info answered", got)
	}

	// The 256 cap: the next call fails at once; then the socket drops and every pending
	// call fails with ErrConnClosed.
	var pending []<-chan outcome
	for range jsonrpc.MaxPendingCalls {
		pending = append(pending, call(context.Background()))
	}
	for i := range jsonrpc.MaxPendingCalls {
		if got := ws.recv(); !strings.Contains(got, `"method":"network/policyRequest"`) {
			t.Fatalf("message %d = %s, want a request", i, got)
		}
	}
	if _, err := link.Call(context.Background(), "network/policyRequest", nil); !errors.Is(err, jsonrpc.ErrTooManyCalls) {
		t.Fatalf("call beyond the cap: %v, want ErrTooManyCalls", err)
	}
	_ = ws.c.CloseNow()
	for i, ch := range pending {
		if o := wait(ch); !errors.Is(o.err, jsonrpc.ErrConnClosed) && !errors.Is(o.err, jsonrpc.ErrNoClient) {
			t.Fatalf("pending call %d after disconnect: %v, want ErrConnClosed", i, o.err)
		}
	}

	// Resume on a new socket: requests are numbered from 1 again.
	ws = dialWS(t, url)
	ws.handshake(sid)
	third := call(context.Background())
	if got := ws.recv(); !strings.HasPrefix(got, `{"id":1,"method":"network/policyRequest"`) {
		t.Fatalf("first request after resume = %s, want id 1", got)
	}
	ws.send(`{"id":1,"result":{"decision":{"type":"deny","reason":"r"}}}`)
	if o := wait(third); o.err != nil || !strings.Contains(string(o.res), `"deny"`) {
		t.Fatalf("call after resume = %s, %v", o.res, o.err)
	}

	// Slow reader: the client stops reading; audits are dropped once the reserve is
	// reached, without waiting, and a control notification still goes at once.
	st.mu.Lock()
	rpc := st.owner.rpc
	st.mu.Unlock()
	ws.hold.Lock()
	release := sync.OnceFunc(ws.hold.Unlock)
	t.Cleanup(release) // before the socket's cleanup, which waits for the reader
	// Each audit carries 64 KiB, pre-encoded, so the byte budget is reached within a few
	// hundred. The loop stops after 100 drops. It cannot wait: nobody reads, so a waiting
	// NotifyBestEffort would never return (the proof is that the loop ends at all).
	pad := json.RawMessage(`{"pad":"` + strings.Repeat("a", 64<<10) + `"}`)
	dropped := 0
	for i := 0; i < 2000 && dropped < 100; i++ {
		if err := link.NotifyBestEffort("network/policyDecision", pad); errors.Is(err, jsonrpc.ErrDropped) {
			dropped++
		} else if err != nil {
			t.Fatalf("audit %d: %v", i, err)
		}
	}
	if dropped == 0 {
		t.Fatal("no audit dropped under a slow reader")
	}
	nctx, ncancel := context.WithTimeout(context.Background(), 2*time.Second)
	err := rpc.Notify(nctx, "process/output", map[string]any{"processId": "p", "seq": 1})
	ncancel()
	if err != nil {
		t.Fatalf("control notification behind dropped audits: %v (delayed)", err)
	}
	release()
	if got := ws.recvUntil(`{"method":"process/output"`); got == "" {
		t.Fatal("control notification never arrived")
	}
	if s := rpc.CallStats(); s.Dropped != uint64(dropped) {
		t.Errorf("Dropped = %d, want %d", s.Dropped, dropped)
	}

	// A reply to an id never issued closes the connection; the pending call fails.
	fourth := call(context.Background())
	if got := ws.recv(); !strings.HasPrefix(got, `{"id":2,"method":"network/policyRequest"`) {
		t.Fatalf("request = %s, want id 2", got)
	}
	ws.send(`{"id":77,"result":{}}`)
	if o := wait(fourth); !errors.Is(o.err, jsonrpc.ErrConnClosed) {
		t.Fatalf("pending call after an unknown-id reply: %v, want ErrConnClosed", o.err)
	}
	if got := ws.recv(); got != "" {
		t.Fatalf("got %s, want the connection closed", got)
	}
}
