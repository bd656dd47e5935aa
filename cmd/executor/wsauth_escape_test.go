package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/execlab/executor/executor/protocol"
	"github.com/execlab/executor/harness"
	"github.com/execlab/executor/internal/refbin"
	"github.com/execlab/executor/sandbox"
	"github.com/execlab/executor/sandbox/sandboxtest"
)

// Regression test for security issue 13, finding 1 (sandbox escape through the local
// listener): a command running in a real bubblewrap sandbox (root read-only, network
// enabled) connects to the executor's own ws:// port with `executor exec --url` and asks
// for an unconfined process that writes a file the sandbox cannot write. Before this fix
// the default listener accepted it and the file was written.
//
//   - default listener (no --ws-auth): refused with 403, the executor recognising the
//     client socket as held by one of its sandboxed commands (best effort);
//   - --ws-auth capability-token, no token: 401;
//   - --ws-auth with the token deliberately handed to the sandboxed command: the same
//     command succeeds and writes the file, which proves the sandbox can reach the
//     listener and run `executor exec` — the refusals above are the listener's doing.
func TestWSAuth_SandboxedCommandCannotReachListener(t *testing.T) {
	sandboxtest.Require(t, sandbox.BackendBubblewrap)
	ours := oursBinary(t)
	const token = "escape-test-capability-token"
	sum := sha256.Sum256([]byte(token))
	authArgs := []string{"--ws-auth", "capability-token", "--ws-token-sha256", hex.EncodeToString(sum[:])}

	for _, tt := range []struct {
		name       string
		serveArgs  []string
		giveToken  bool
		wantStatus string // in the sandboxed exec's error; "" = the escape succeeds
		landlock   bool   // the degraded backend (same namespaces; told apart by seccomp)
	}{
		{"default_refuses_sandboxed_peer", nil, false, "403", false},
		{"default_refuses_landlock_sandboxed_peer", []string{"--sandbox-backend", "landlock"}, false, "403", true},
		{"capability_token_refuses", authArgs, false, "401", false},
		{"capability_token_reachable_with_token", authArgs, true, "", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if tt.landlock {
				sandboxtest.Require(t, sandbox.BackendLandlock)
			}
			dir := refbin.CodexHome(t) // under /var/tmp; the sandbox may only read it
			marker := filepath.Join(dir, "escaped")
			tokenArgs := ""
			if tt.giveToken {
				tokFile := filepath.Join(dir, "token")
				if err := os.WriteFile(tokFile, []byte(token), 0o600); err != nil {
					t.Fatal(err)
				}
				tokenArgs = "--auth-bearer-token-file " + tokFile
			}
			url := startOursServe(t, ours, tt.serveArgs...)

			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			c, err := harness.DialLocal(ctx, url, &harness.Options{AuthBearerToken: token})
			if err != nil {
				t.Fatalf("legitimate client: %v", err)
			}
			defer c.Close()
			if _, err := c.Initialize(ctx, "escape-test", ""); err != nil {
				t.Fatal(err)
			}
			// First a direct write (must fail: the sandbox is read-only), then the escape
			// attempt through the listener.
			script := `{ echo direct > "$1"; } 2>/dev/null && echo DIRECT-WRITE-SUCCEEDED; ` +
				`"$2" exec --url "$3" $4 -- sh -c 'echo escaped > "$1"' sh "$1"; echo "exec-exit=$?"`
			params := map[string]any{
				"processId": "attacker",
				"argv":      []string{"sh", "-c", script, "sh", marker, ours, url, tokenArgs},
				"cwd":       protocol.FromNative(dir),
				"env":       map[string]string{"PATH": os.Getenv("PATH"), "HOME": dir},
				"tty":       false,
				"sandbox": json.RawMessage(`{"permissions":{"type":"managed","network":"enabled","file_system":{"type":"restricted",` +
					`"entries":[{"path":{"type":"special","value":{"kind":"root"}},"access":"read"}]}},"windowsSandboxLevel":"disabled"}`),
			}
			if err := c.Call(ctx, protocol.MethodProcessStart, params, nil); err != nil {
				t.Fatalf("process/start: %v", err)
			}
			out, code := readUntilExit(ctx, t, c, "attacker")
			t.Logf("sandboxed command (exit %d):\n%s", code, out)
			if strings.Contains(out, "DIRECT-WRITE-SUCCEEDED") {
				t.Fatal("the sandbox let the command write directly; the test proves nothing")
			}
			_, statErr := os.Stat(marker)
			written := statErr == nil
			if tt.wantStatus == "" {
				if !written || !strings.Contains(out, "exec-exit=0") {
					t.Fatalf("with the token the sandboxed exec should reach the listener: marker written %v", written)
				}
				return
			}
			if written {
				t.Fatal("a sandboxed command started an unconfined process through the listener")
			}
			if !strings.Contains(out, "got "+tt.wantStatus) || strings.Contains(out, "exec-exit=0") {
				t.Fatalf("want the listener's %s and a failed exec, got:\n%s", tt.wantStatus, out)
			}
		})
	}
}

// startOursServe runs `executor serve --listen ws://127.0.0.1:0 <args>` until cleanup and
// returns the printed URL.
func startOursServe(t *testing.T, bin string, args ...string) string {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"serve", "--listen", "ws://127.0.0.1:0"}, args...)...)
	return refbin.Launch(t, cmd, &refbin.LaunchOptions{Name: "executor serve"}).URL()
}

// readUntilExit collects a process's output with process/read until it is closed (all
// output delivered) and returns it with the exit code.
func readUntilExit(ctx context.Context, t *testing.T, c *harness.Client, id string) (string, int) {
	t.Helper()
	var out strings.Builder
	var after uint64
	wait := uint64(1000)
	code := -1
	for {
		r, err := c.ReadProcess(ctx, protocol.ProcessReadParams{ProcessID: id, AfterSeq: &after, WaitMs: &wait})
		if err != nil {
			t.Fatalf("process/read: %v", err)
		}
		for _, ch := range r.Chunks {
			out.Write(ch.Chunk)
			after = max(after, ch.Seq)
		}
		if r.ExitCode != nil {
			code = int(*r.ExitCode)
		}
		if r.Closed {
			return out.String(), code
		}
	}
}

// TestWSAuth_ExecSendsToken: `executor exec --url` reaches a listener with --ws-auth when
// given the token file by flag or by EXECUTOR_AUTH_BEARER_TOKEN_FILE, and fails with the
// 401 (never printing the token) without it.
func TestWSAuth_ExecSendsToken(t *testing.T) {
	ours := oursBinary(t)
	dir := refbin.CodexHome(t)
	tokFile := filepath.Join(dir, "token")
	if err := os.WriteFile(tokFile, []byte("exec-token-123\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	url := startOursServe(t, ours, "--ws-auth", "capability-token", "--ws-token-file", tokFile)
	for _, tt := range []struct {
		name string
		args []string
		env  []string
		ok   bool
	}{
		{"flag", []string{"--auth-bearer-token-file", tokFile}, nil, true},
		{"env", nil, []string{"EXECUTOR_AUTH_BEARER_TOKEN_FILE=" + tokFile}, true},
		{"none", nil, nil, false},
	} {
		args := append(append([]string{"exec", "--url", url}, tt.args...), "--", "echo", "hello")
		cmd := exec.Command(ours, args...)
		cmd.Env = append(os.Environ(), tt.env...)
		out, err := cmd.CombinedOutput()
		switch {
		case tt.ok && (err != nil || strings.TrimSpace(string(out)) != "hello"):
			t.Errorf("%s: %v %q, want hello", tt.name, err, out)
		case !tt.ok && (err == nil || !strings.Contains(string(out), "401")):
			t.Errorf("%s: %v %q, want the 401", tt.name, err, out)
		}
		if strings.Contains(string(out), "exec-token-123") {
			t.Errorf("%s: output leaks the token: %q", tt.name, out)
		}
	}
}
