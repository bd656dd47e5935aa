package e2e_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// wsTap is a logging WebSocket proxy on 127.0.0.1 between the codex CLI and an
// exec-server: it forwards every message unchanged (text or binary) in both directions and
// records them, so a test can assert what the CLI asked for and what the server answered,
// and print the exchange when they disagree.
//
// Each accepted connection gets one upstream connection; the two pump goroutines of a pair
// are owned by its handler, which returns after both stop. Close closes every connection and
// waits for every handler.
type wsTap struct {
	upstream string
	ln       net.Listener
	srv      *http.Server
	served   chan struct{} // closed when srv.Serve returns

	// mu guards frames, conns and closed: the pumps of several connections append at once,
	// and Close must not race a handler that is about to register itself in wg.
	mu     sync.Mutex
	frames []tapFrame
	conns  map[*websocket.Conn]struct{} // nil once closed
	wg     sync.WaitGroup               // one per handler in flight; Add only under mu while open
}

// tapFrame is one forwarded message. FromClient is true for CLI → server.
type tapFrame struct {
	FromClient bool
	Data       []byte
}

// tapReadLimit bounds one message (bytes); process output in a read response can be large.
const tapReadLimit = 64 << 20

func startWSTap(t *testing.T, upstream string) *wsTap {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &wsTap{upstream: upstream, ln: ln, served: make(chan struct{}), conns: map[*websocket.Conn]struct{}{}}
	p.srv = &http.Server{Handler: http.HandlerFunc(p.handle), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = p.srv.Serve(ln); close(p.served) }()
	t.Cleanup(p.Close)
	return p
}

// URL is the ws:// address to give the CLI.
func (p *wsTap) URL() string { return "ws://" + p.ln.Addr().String() }

func (p *wsTap) track(c *websocket.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.conns == nil { // closed
		return false
	}
	p.conns[c] = struct{}{}
	return true
}

func (p *wsTap) handle(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	if p.conns == nil {
		p.mu.Unlock()
		http.Error(w, "tap closed", http.StatusServiceUnavailable)
		return
	}
	p.wg.Add(1)
	p.mu.Unlock()
	defer p.wg.Done()
	down, err := websocket.Accept(w, r, &websocket.AcceptOptions{CompressionMode: websocket.CompressionDisabled})
	if err != nil {
		return
	}
	defer down.CloseNow()
	// The dial is bounded; the connection itself lives until either side ends it.
	dctx, cancel := context.WithTimeout(r.Context(), 10*time.Second)
	up, _, err := websocket.Dial(dctx, p.upstream, &websocket.DialOptions{CompressionMode: websocket.CompressionDisabled})
	cancel()
	if err != nil {
		down.Close(websocket.StatusInternalError, "tap: upstream unreachable")
		return
	}
	defer up.CloseNow()
	if !p.track(down) || !p.track(up) {
		return
	}
	down.SetReadLimit(tapReadLimit)
	up.SetReadLimit(tapReadLimit)
	ctx, stop := context.WithCancel(context.Background()) // lifetime of the pair, not of the upgrade request
	defer stop()
	done := make(chan struct{}, 2)
	pump := func(from, to *websocket.Conn, fromClient bool) {
		defer func() { stop(); done <- struct{}{} }()
		for {
			typ, data, err := from.Read(ctx)
			if err != nil {
				var ce websocket.CloseError
				if errors.As(err, &ce) {
					to.Close(ce.Code, ce.Reason)
				}
				return
			}
			p.mu.Lock()
			p.frames = append(p.frames, tapFrame{FromClient: fromClient, Data: data})
			p.mu.Unlock()
			if to.Write(ctx, typ, data) != nil {
				return
			}
		}
	}
	go pump(down, up, true)
	go pump(up, down, false)
	<-done
	down.CloseNow()
	up.CloseNow()
	<-done
	p.mu.Lock()
	if p.conns != nil {
		delete(p.conns, down)
		delete(p.conns, up)
	}
	p.mu.Unlock()
}

// Close stops accepting, closes every proxied connection and waits for the handlers.
func (p *wsTap) Close() {
	_ = p.srv.Close() // closes the listener and idle conns; hijacked WebSockets are ours to close
	<-p.served
	p.mu.Lock()
	conns := p.conns
	p.conns = nil
	p.mu.Unlock()
	for c := range conns {
		c.CloseNow()
	}
	p.wg.Wait()
}

// rpcMessage is one JSON-RPC message as the exec-server dialect frames it (no "jsonrpc").
type rpcMessage struct {
	ID     json.RawMessage `json:"id,omitempty"`
	Method string          `json:"method,omitempty"`
	Params json.RawMessage `json:"params,omitempty"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  json.RawMessage `json:"error,omitempty"`
}

// exchange decodes the recorded frames in order.
func (p *wsTap) exchange() []tappedMessage {
	p.mu.Lock()
	frames := append([]tapFrame(nil), p.frames...)
	p.mu.Unlock()
	out := make([]tappedMessage, 0, len(frames))
	for _, f := range frames {
		var m rpcMessage
		err := json.Unmarshal(f.Data, &m)
		out = append(out, tappedMessage{tapFrame: f, Msg: m, Bad: err})
	}
	return out
}

// tappedMessage is a recorded frame with its decoded form (Bad when it was not JSON).
type tappedMessage struct {
	tapFrame
	Msg rpcMessage
	Bad error
}

// responseTo returns the server's response to the client request with this id.
func responseTo(msgs []tappedMessage, id json.RawMessage) (rpcMessage, bool) {
	for _, m := range msgs {
		if !m.FromClient && m.Msg.Method == "" && string(m.Msg.ID) == string(id) {
			return m.Msg, true
		}
	}
	return rpcMessage{}, false
}

// transcript renders the exchange for a failure message: one line per frame, each cut to
// max bytes.
func transcript(msgs []tappedMessage, max int) string {
	var b strings.Builder
	for _, m := range msgs {
		dir := "server→cli"
		if m.FromClient {
			dir = "cli→server"
		}
		s := string(m.Data)
		if len(s) > max {
			s = s[:max] + fmt.Sprintf("…(%d bytes)", len(m.Data))
		}
		fmt.Fprintf(&b, "  %s %s\n", dir, s)
	}
	return b.String()
}
