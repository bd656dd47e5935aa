package fs_test

// A minimal client for the reference binary (`codex exec-server`), used by differential
// tests. Binary lookup: $EXECUTOR_REFERENCE_BIN, else scripts/install-reference.sh, else
// /work/shared/tools/reference-codex; with CI=true a missing binary fails the test.

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

type refServer struct {
	t    *testing.T
	conn *websocket.Conn
	next int
}

type refError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

func findReference(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("EXECUTOR_REFERENCE_BIN"); p != "" {
		return p
	}
	candidates := [][]string{{"../../scripts/install-reference.sh"}, {"/work/shared/tools/reference-codex"}}
	for _, c := range candidates {
		if _, err := os.Stat(c[0]); err != nil {
			continue
		}
		out, err := exec.Command(c[0]).Output()
		if err == nil {
			if p := strings.TrimSpace(string(out)); p != "" {
				return p
			}
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("reference binary not found (set EXECUTOR_REFERENCE_BIN)")
	}
	t.Skip("reference binary not found; set EXECUTOR_REFERENCE_BIN or CI=true to require it")
	return ""
}

// startReference starts the reference exec-server and completes the handshake.
func startReference(t *testing.T) *refServer {
	t.Helper()
	bin := findReference(t)
	home, err := os.MkdirTemp("/var/tmp", "executor-ref-home-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(home) })
	tmp := filepath.Join(home, "tmp")
	if err := os.Mkdir(tmp, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "exec-server", "--listen", "ws://127.0.0.1:0")
	cmd.Env = append(os.Environ(), "CODEX_HOME="+home, "TMPDIR="+tmp)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	urlCh := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if line := strings.TrimSpace(sc.Text()); strings.HasPrefix(line, "ws://") {
				urlCh <- line
				break
			}
		}
		close(urlCh)
		for sc.Scan() {
		}
	}()
	var url string
	select {
	case url = <-urlCh:
	case <-time.After(20 * time.Second):
		t.Fatal("reference did not print its URL")
	}
	if url == "" {
		t.Fatal("reference exited before printing its URL")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, _, err := websocket.Dial(ctx, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	conn.SetReadLimit(64 << 20)
	t.Cleanup(func() { conn.CloseNow() })
	r := &refServer{t: t, conn: conn, next: 1}
	if _, rerr := r.call("initialize", map[string]any{"clientName": "executor-differential"}); rerr != nil {
		t.Fatalf("initialize: %+v", rerr)
	}
	r.send(map[string]any{"method": "initialized"})
	return r
}

func (r *refServer) send(v any) {
	r.t.Helper()
	b, _ := json.Marshal(v)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := r.conn.Write(ctx, websocket.MessageText, b); err != nil {
		r.t.Fatal(err)
	}
}

// call sends a request and returns its result or error, skipping notifications.
func (r *refServer) call(method string, params any) (json.RawMessage, *refError) {
	r.t.Helper()
	id := r.next
	r.next++
	r.send(map[string]any{"id": id, "method": method, "params": params})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for {
		_, b, err := r.conn.Read(ctx)
		if err != nil {
			r.t.Fatalf("reading %s response: %v", method, err)
		}
		var m struct {
			ID     json.RawMessage `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  *refError       `json:"error"`
		}
		if err := json.Unmarshal(b, &m); err != nil {
			r.t.Fatal(err)
		}
		if string(m.ID) != fmt.Sprint(id) {
			continue
		}
		return m.Result, m.Error
	}
}
