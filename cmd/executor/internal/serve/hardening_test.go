package serve_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/execlab/executor/cmd/executor/internal/serve"
	"github.com/execlab/executor/internal/syncbuf"
	"github.com/execlab/executor/internal/wsauth"
)

// startWSWith runs the WebSocket server with cfg (Listen and Stdout filled in) and returns
// its URL; the server stops at cleanup.
func startWSWith(t *testing.T, cfg serve.Config) string {
	t.Helper()
	cfg.Listen, _ = serve.ParseListen("ws://127.0.0.1:0")
	pr, pw := io.Pipe()
	cfg.Stdout = pw
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- serve.Run(ctx, cfg) }() // stopped by cancel
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	go io.Copy(io.Discard, pr) // drains until pw closes
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
		pw.Close()
	})
	return strings.TrimSpace(line)
}

// initializeAndClose sends initialize on c, wants a result for it, and closes c normally.
func initializeAndClose(ctx context.Context, t *testing.T, c *websocket.Conn) {
	t.Helper()
	if err := c.Write(ctx, websocket.MessageText, []byte(`{"id":1,"method":"initialize","params":{"clientName":"t"}}`)); err != nil {
		t.Fatal(err)
	}
	if _, b, err := c.Read(ctx); err != nil || !strings.Contains(string(b), `"result"`) {
		t.Fatalf("initialize: %s %v", b, err)
	}
	c.Close(websocket.StatusNormalClosure, "")
}

func capabilityPolicy(t *testing.T, token string) *wsauth.Policy {
	t.Helper()
	sum := sha256.Sum256([]byte(token))
	h := hex.EncodeToString(sum[:])
	mode := wsauth.ModeCapabilityToken
	s, err := wsauth.Flags{Mode: &mode, TokenSHA256: &h}.Settings()
	if err != nil {
		t.Fatal(err)
	}
	p, err := wsauth.Load(s)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestWebSocket_CapabilityToken(t *testing.T) {
	var logs syncbuf.Buffer
	u := startWSWith(t, serve.Config{Auth: capabilityPolicy(t, "tok-1"),
		Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, tt := range []struct {
		auth string
		want string
	}{
		{"", "missing websocket bearer token"},
		{"Bearer tok-2", "invalid websocket bearer token"},
		{"Token tok-1", "invalid authorization header"},
	} {
		h := http.Header{}
		if tt.auth != "" {
			h.Set("Authorization", tt.auth)
		}
		_, resp, err := websocket.Dial(ctx, u, &websocket.DialOptions{HTTPHeader: h})
		if err == nil || resp == nil || resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("%q: err %v resp %v, want 401", tt.auth, err, resp)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(b) != tt.want || resp.Header.Get("Content-Type") != "text/plain; charset=utf-8" {
			t.Errorf("%q: body %q (%s), want %q", tt.auth, b, resp.Header.Get("Content-Type"), tt.want)
		}
	}
	c, _, err := websocket.Dial(ctx, u, &websocket.DialOptions{HTTPHeader: http.Header{"Authorization": {"Bearer tok-1"}}})
	if err != nil {
		t.Fatalf("with the token: %v", err)
	}
	initializeAndClose(ctx, t, c)
	resp, err := http.Get("http" + strings.TrimPrefix(u, "ws") + "/readyz")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("/readyz without a token: %v %v", resp, err)
	}
	resp.Body.Close()
	http.DefaultClient.CloseIdleConnections()
	if strings.Contains(logs.String(), "tok-") {
		t.Errorf("a token reached the log:\n%s", logs.String())
	}
	if !strings.Contains(logs.String(), "websocket upgrade refused") {
		t.Errorf("refusals not logged:\n%s", logs.String())
	}
}

// TestWebSocket_WarnsOnceWithoutAuth: a sandboxed process/start with network access on a
// listener without --ws-auth logs one warning naming the remedy; with auth, none.
func TestWebSocket_WarnsOnceWithoutAuth(t *testing.T) {
	start := `{"id":%d,"method":"process/start","params":{"processId":"p%d","argv":["true"],"cwd":"file:///","env":{},"tty":false,` +
		`"sandbox":{"permissions":{"type":"managed","network":"%s","file_system":{"type":"restricted","entries":[]}},"windowsSandboxLevel":"disabled"}}}`
	for _, tt := range []struct {
		name      string
		auth      *wsauth.Policy
		network   string
		wantWarns int
	}{
		{"no auth, network enabled", nil, "enabled", 1},
		{"no auth, network restricted", nil, "restricted", 0},
		{"auth, network enabled", capabilityPolicy(t, "tok-1"), "enabled", 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var logs syncbuf.Buffer
			u := startWSWith(t, serve.Config{Auth: tt.auth, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			for conn := 0; conn < 2; conn++ {
				c, _, err := websocket.Dial(ctx, u, &websocket.DialOptions{HTTPHeader: http.Header{"Authorization": {"Bearer tok-1"}}})
				if err != nil {
					t.Fatal(err)
				}
				msgs := []string{`{"id":1,"method":"initialize","params":{"clientName":"t"}}`, `{"method":"initialized"}`,
					fmt.Sprintf(start, 2, 2, tt.network), fmt.Sprintf(start, 3, 3, tt.network)}
				for _, m := range msgs {
					if err := c.Write(ctx, websocket.MessageText, []byte(m)); err != nil {
						t.Fatal(err)
					}
				}
				for got := 0; got < 3; { // the replies of 1, 2 and 3 (notifications skipped)
					_, b, err := c.Read(ctx)
					if err != nil {
						t.Fatal(err)
					}
					if bytes.HasPrefix(b, []byte(`{"id":`)) {
						got++
					}
				}
				c.Close(websocket.StatusNormalClosure, "")
			}
			if n := strings.Count(logs.String(), "without auth"); n != tt.wantWarns {
				t.Fatalf("%d warnings, want %d:\n%s", n, tt.wantWarns, logs.String())
			}
			if tt.wantWarns > 0 && !strings.Contains(logs.String(), "--ws-auth capability-token") {
				t.Errorf("warning does not name the remedy:\n%s", logs.String())
			}
		})
	}
}

func TestMaxConnsFor(t *testing.T) {
	for _, tt := range []struct {
		nofile uint64
		want   int
	}{{0, serve.DefaultMaxConns}, {4, serve.MinMaxConns}, {64, 32}, {1 << 20, serve.DefaultMaxConns}} {
		if got := serve.MaxConnsForForTest(tt.nofile); got != tt.want {
			t.Errorf("maxConnsFor(%d) = %d, want %d", tt.nofile, got, tt.want)
		}
	}
}

// childEnv makes the test binary a serve child with a low descriptor limit (runChild).
const (
	childEnv    = "SERVE_TEST_CHILD_NOFILE"
	childNoFile = 64
	idleSockets = 200 // > childNoFile: without a cap the child runs out of descriptors
)

// runChild lowers RLIMIT_NOFILE, serves on a loopback port (printed on stdout) with the
// default, derived connection cap, and exits when stdin closes.
func runChild() int {
	lim := syscall.Rlimit{Cur: childNoFile, Max: childNoFile}
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		fmt.Fprintln(os.Stderr, "setrlimit:", err)
		return 1
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() { _, _ = io.Copy(io.Discard, os.Stdin); cancel() }() // the parent closes stdin to stop us
	l, _ := serve.ParseListen("ws://127.0.0.1:0")
	err := serve.Run(ctx, serve.Config{Listen: l, Stdout: os.Stdout,
		Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))})
	if err != nil {
		fmt.Fprintln(os.Stderr, "serve:", err)
		return 1
	}
	return 0
}

// TestWebSocket_IdleSocketsDoNotStarve: a server limited to 64 descriptors gets 200 idle
// connections (never a byte sent); a legitimate /readyz and a WebSocket session are still
// served at once (well before the 10 s header timeout would reap the idle ones), because
// the connection cap evicts idle sockets for new ones.
func TestWebSocket_IdleSocketsDoNotStarve(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"=1")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr syncbuf.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stdin.Close()
		if err := cmd.Wait(); err != nil {
			t.Errorf("child: %v\n%s", err, stderr.String())
		}
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("child URL: %v\n%s", err, stderr.String())
	}
	u := strings.TrimSpace(line)
	addr := strings.TrimPrefix(u, "ws://")

	idle := make([]net.Conn, 0, idleSockets)
	defer func() {
		for _, c := range idle {
			c.Close()
		}
	}()
	for i := 0; i < idleSockets; i++ {
		c, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if err != nil {
			t.Fatalf("idle socket %d: %v", i, err)
		}
		idle = append(idle, c)
	}

	const budget = 3 * time.Second // far below ReadHeaderTimeout (10 s)
	begin := time.Now()
	client := &http.Client{Timeout: budget, Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := client.Get("http://" + addr + "/readyz")
	if err != nil {
		t.Fatalf("/readyz behind %d idle sockets: %v\n%s", idleSockets, err, stderr.String())
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("/readyz = %d", resp.StatusCode)
	}
	ctx, cancel := context.WithTimeout(context.Background(), budget)
	defer cancel()
	c, _, err := websocket.Dial(ctx, u, nil)
	if err != nil {
		t.Fatalf("websocket behind idle sockets: %v", err)
	}
	initializeAndClose(ctx, t, c)
	if el := time.Since(begin); el > budget {
		t.Fatalf("legitimate requests took %v", el)
	}
	// Most idle sockets were closed by the server to make room (EOF on read).
	closed := 0
	for _, ic := range idle {
		_ = ic.SetReadDeadline(time.Now().Add(10 * time.Millisecond))
		if _, err := ic.Read(make([]byte, 1)); err == io.EOF || isReset(err) {
			closed++
		}
	}
	if closed < idleSockets-childNoFile {
		t.Errorf("%d of %d idle sockets closed by the server, want at least %d", closed, idleSockets, idleSockets-childNoFile)
	}
}

func isReset(err error) bool {
	return err != nil && (strings.Contains(err.Error(), "reset") || strings.Contains(err.Error(), "broken pipe"))
}
