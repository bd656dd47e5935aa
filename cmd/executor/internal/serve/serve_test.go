package serve_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"go.uber.org/goleak"

	"github.com/execlab/executor/cmd/executor/internal/serve"
)

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) != "" {
		os.Exit(runChild())
	}
	goleak.VerifyTestMain(m)
}

func TestParseListen(t *testing.T) {
	tests := []struct {
		in, wantErr string
		stdio       bool
	}{
		{in: "ws://127.0.0.1:0"},
		{in: "ws://[::1]:8080"},
		{in: "stdio", stdio: true},
		{in: "stdio://", stdio: true},
		{in: "ws://localhost:1", wantErr: "invalid websocket --listen URL `ws://localhost:1`; expected `ws://IP:PORT`"},
		{in: "ws://127.0.0.1:1/", wantErr: "invalid websocket --listen URL `ws://127.0.0.1:1/`; expected `ws://IP:PORT`"},
		{in: "ws://127.0.0.1", wantErr: "invalid websocket --listen URL `ws://127.0.0.1`; expected `ws://IP:PORT`"},
		{in: "http://127.0.0.1:1", wantErr: "unsupported --listen URL `http://127.0.0.1:1`; expected `ws://IP:PORT` or `stdio`"},
	}
	for _, tt := range tests {
		l, err := serve.ParseListen(tt.in)
		switch {
		case tt.wantErr != "":
			if err == nil || err.Error() != tt.wantErr {
				t.Errorf("ParseListen(%q) error = %v, want %q", tt.in, err, tt.wantErr)
			}
		case err != nil:
			t.Errorf("ParseListen(%q) error = %v", tt.in, err)
		case l.Stdio != tt.stdio:
			t.Errorf("ParseListen(%q).Stdio = %v, want %v", tt.in, l.Stdio, tt.stdio)
		}
	}
}

// startWS runs the WebSocket server with the default Config and returns its URL; the
// server stops at cleanup.
func startWS(t *testing.T) string {
	t.Helper()
	return startWSWith(t, serve.Config{})
}

func TestWebSocket_HTTPRoutes(t *testing.T) {
	u := startWS(t)
	if !strings.HasPrefix(u, "ws://127.0.0.1:") {
		t.Fatalf("printed %q, want ws://127.0.0.1:<port>", u)
	}
	base := "http" + strings.TrimPrefix(u, "ws")
	get := func(path string, origin bool) int {
		req, _ := http.NewRequest("GET", base+path, nil)
		if origin {
			req.Header.Set("Origin", "https://evil.example")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	for _, tt := range []struct {
		path   string
		origin bool
		want   int
	}{
		{"/readyz", false, 200},
		{"/readyz", true, 403},
		{"/", true, 403},
		{"/", false, 400}, // not an upgrade
		{"/other", false, 404},
	} {
		if got := get(tt.path, tt.origin); got != tt.want {
			t.Errorf("GET %s (origin %v) = %d, want %d", tt.path, tt.origin, got, tt.want)
		}
	}
	http.DefaultClient.CloseIdleConnections()
	ctx := context.Background()
	_, resp, err := websocket.Dial(ctx, u, &websocket.DialOptions{HTTPHeader: http.Header{"Origin": {"https://evil.example"}}})
	if err == nil || resp == nil || resp.StatusCode != 403 {
		t.Fatalf("upgrade with Origin: err %v, resp %v, want 403", err, resp)
	}
}

func TestWebSocket_BinaryFramesAndTextReplies(t *testing.T) {
	u := startWS(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(ctx, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	if err := c.Write(ctx, websocket.MessageBinary, []byte(`{"id":1,"method":"initialize","params":{"clientName":"t"}}`)); err != nil {
		t.Fatal(err)
	}
	typ, b, err := c.Read(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil || typ != websocket.MessageText || m["result"] == nil {
		t.Fatalf("got %v %s, want a Text result", typ, b)
	}
	if err := c.Write(ctx, websocket.MessageText, []byte("not-json")); err != nil {
		t.Fatal(err)
	}
	_, b, _ = c.Read(ctx)
	if !strings.Contains(string(b), `"id":-1`) || !strings.Contains(string(b), "failed to parse websocket JSON-RPC message from exec-server websocket 127.0.0.1:") {
		t.Fatalf("got %s, want the malformed-message error", b)
	}
	c.Close(websocket.StatusNormalClosure, "")
}

func TestStdio_LinesAndEOFShutsDown(t *testing.T) {
	in, inW := io.Pipe()
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() { // ends at stdin EOF
		done <- serve.Run(context.Background(), serve.Config{Listen: serve.Listen{Stdio: true}, Stdin: in, Stdout: pw})
		pw.Close()
	}()
	io.WriteString(inW, "\n   \n"+`{"id":1,"method":"initialize","params":{"clientName":"t"}}`+"\n")
	sc := bufio.NewScanner(pr)
	var lines []string
	if sc.Scan() {
		lines = append(lines, sc.Text())
	}
	io.WriteString(inW, `{"method":"initialized"}`+"\n"+`{"id":2,"method":"environment/status"}`+"\n")
	if sc.Scan() {
		lines = append(lines, sc.Text())
	}
	inW.Close() // EOF ends the connection and the server
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
	if len(lines) != 2 || !strings.HasPrefix(lines[0], `{"id":1,"result":`) || lines[1] != `{"id":2,"result":{"status":"ready"}}` {
		t.Fatalf("got %q, want the initialize and status replies, one per line", lines)
	}
}
