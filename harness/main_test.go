package harness_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/execlab/executor/internal/refbin"
)

// oursBin is the executor binary built by TestMain.
var oursBin string

func TestMain(m *testing.M) { refbin.MainWithExecutor(m, "harness-test-", &oursBin) }

// server is one executor under test.
type server struct {
	name string // subtest name: "ours", or the reference release's version
	// argv returns the command line; for a reference release it fails (CI=true) or skips
	// t when the release cannot be found (internal/refbin).
	argv func(t testing.TB) []string
	// release is the reference release's version, "" for ours.
	release string
}

// servers are ours and every reference release (refbin.Versions, newest first); ours runs
// the binary TestMain builds.
var servers = testServers()

func testServers() []server {
	out := []server{{name: "ours", argv: func(testing.TB) []string {
		return []string{oursBin, "serve", "--listen", "ws://127.0.0.1:0"}
	}}}
	for _, v := range refbin.Versions {
		out = append(out, server{name: v, release: v, argv: func(t testing.TB) []string {
			return []string{refbin.ReleaseOf(t, v).Path, "exec-server", "--listen", "ws://127.0.0.1:0"}
		}})
	}
	return out
}

// startServer runs s with fresh CODEX_HOME and TMPDIR under /var/tmp and returns the URL
// it prints. The process is killed and reaped at cleanup.
func startServer(t testing.TB, s server) string {
	t.Helper()
	if tt, ok := t.(*testing.T); ok && s.release != "" {
		refbin.Track(tt, s.release) // a line per release in scripts/test.sh's summary
	}
	argv := s.argv(t)
	home, err := os.MkdirTemp("/var/tmp", "harness-home-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(home) })
	tmp := filepath.Join(home, "tmp")
	if err := os.Mkdir(tmp, 0o700); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), "CODEX_HOME="+home, "TMPDIR="+tmp)
	return refbin.Launch(t, cmd, &refbin.LaunchOptions{Line: wsURL, LineTimeout: 20 * time.Second, Kill: true, Name: s.name}).URL()
}

// wsURL is the line both servers print when listening.
var wsURL = regexp.MustCompile(`^ws://\S+$`)

func testCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}
