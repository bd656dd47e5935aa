package refbin

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// Server is a running reference `codex exec-server` with one initialized WebSocket
// session, for differential tests. Not safe for concurrent use.
type Server struct {
	tb   testing.TB
	conn *websocket.Conn
	next int
}

// RPCError is a JSON-RPC error object as the reference sent it.
type RPCError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

// Start runs the reference binary bin (a Release's Path) with a fresh CODEX_HOME and
// TMPDIR under /var/tmp, connects, and completes initialize/initialized. Everything is
// torn down at test cleanup.
func Start(tb testing.TB, bin string) *Server {
	tb.Helper()
	home := CodexHome(tb)
	tmp := filepath.Join(home, "tmp")
	if err := os.Mkdir(tmp, 0o755); err != nil {
		tb.Fatal(err)
	}
	cmd := exec.Command(bin, "exec-server", "--listen", "ws://127.0.0.1:0")
	cmd.Env = append(os.Environ(), "CODEX_HOME="+home, "TMPDIR="+tmp)
	url := Launch(tb, cmd, &LaunchOptions{Kill: true, Name: "reference exec-server"}).URL()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, _, err := websocket.Dial(ctx, url, nil)
	if err != nil {
		tb.Fatal(err)
	}
	conn.SetReadLimit(64 << 20)
	tb.Cleanup(func() { conn.CloseNow() })
	s := &Server{tb: tb, conn: conn, next: 1}
	if _, rerr := s.Call("initialize", map[string]any{"clientName": "executor-differential"}); rerr != nil {
		tb.Fatalf("initialize: %+v", rerr)
	}
	s.Send(map[string]any{"method": "initialized"})
	return s
}

// Send writes one JSON message.
func (s *Server) Send(v any) {
	s.tb.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		s.tb.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.conn.Write(ctx, websocket.MessageText, b); err != nil {
		s.tb.Fatal(err)
	}
}

// Call sends a request and returns its result or error, skipping notifications.
func (s *Server) Call(method string, params any) (json.RawMessage, *RPCError) {
	s.tb.Helper()
	id := s.next
	s.next++
	s.Send(map[string]any{"id": id, "method": method, "params": params})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for {
		_, b, err := s.conn.Read(ctx)
		if err != nil {
			s.tb.Fatalf("reading %s response: %v", method, err)
		}
		var m struct {
			ID     json.RawMessage `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  *RPCError       `json:"error"`
		}
		if err := json.Unmarshal(b, &m); err != nil {
			s.tb.Fatal(err)
		}
		if string(m.ID) != fmt.Sprint(id) {
			continue
		}
		return m.Result, m.Error
	}
}
