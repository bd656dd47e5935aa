package interop_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/execlab/executor/internal/refbin"
	"github.com/execlab/executor/registry/rendezvous"
	"github.com/execlab/executor/registry/server"
)

// ourRegistry is the self-hosted registry + rendezvous (registry/server, registry/rendezvous)
// running in the test process on 127.0.0.1, with one token file.
type ourRegistry struct {
	URL       string
	Token     string
	TokenFile string
	Hub       *rendezvous.Hub
	store     server.Store
	srv       *http.Server
	done      chan struct{}
}

// startOurRegistry serves a fresh SQLite-backed registry; everything is closed in Cleanup.
func startOurRegistry(t testing.TB) *ourRegistry {
	t.Helper()
	return startOurRegistryBehind(t, nil)
}

// startOurRegistryBehind is startOurRegistry whose public URL (the one its bundles and
// registrations hand out, and r.URL) is front(listener address) when front is non-nil: a
// proxy in front of it.
func startOurRegistryBehind(t testing.TB, front func(addr string) string) *ourRegistry {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	st, err := server.OpenStore(ctx, filepath.Join(dir, "registry.db"))
	if err != nil {
		t.Fatal(err)
	}
	var tb [16]byte
	_, _ = rand.Read(tb[:])
	token := "tok_" + hex.EncodeToString(tb[:])
	tokenFile := filepath.Join(dir, "tokens")
	if err := os.WriteFile(tokenFile, []byte(token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tokens, err := server.ParseTokens(strings.NewReader(token))
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	signer := rendezvous.NewRandomSigner()
	hub, err := rendezvous.New(&rendezvous.Options{Signer: signer, CurrentGeneration: server.GenerationFunc(st)})
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + ln.Addr().String()
	if front != nil {
		url = front(ln.Addr().String())
	}
	s, err := server.New(&server.Options{Store: st, Tokens: tokens, Hub: hub, Signer: signer, PublicURL: url})
	if err != nil {
		t.Fatal(err)
	}
	r := &ourRegistry{URL: url, Token: token, TokenFile: tokenFile, Hub: hub, store: st,
		srv: &http.Server{Handler: s}, done: make(chan struct{})}
	go func() { defer close(r.done); _ = r.srv.Serve(ln) }()
	t.Cleanup(func() {
		r.srv.Close()
		hub.Close()
		<-r.done
		st.Close()
	})
	return r
}

// waitOnline blocks until an executor socket for env is open on the hub.
func (r *ourRegistry) waitOnline(t testing.TB, ctx context.Context, env string) {
	t.Helper()
	for {
		if _, ok := r.Hub.Online(env); ok {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("executor for %s never connected to the rendezvous: %v", env, ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

var (
	oursOnce sync.Once
	oursPath string
	oursErr  error
)

// oursBinary builds cmd/executor once per test process.
func oursBinary(t testing.TB) string {
	t.Helper()
	oursOnce.Do(func() {
		dir, err := os.MkdirTemp("", "executor-interop-bin-")
		if err != nil {
			oursErr = err
			return
		}
		oursPath = filepath.Join(dir, "executor")
		cmd := exec.Command("go", "build", "-o", oursPath, "github.com/execlab/executor/cmd/executor")
		cmd.Dir = repoRoot()
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0") // static, as released: no stage can be preloaded
		out, err := cmd.CombinedOutput()
		if err != nil {
			oursErr = &buildError{out: string(out), err: err}
		}
	})
	if oursErr != nil {
		t.Fatalf("building executor: %v", oursErr)
	}
	return oursPath
}

type buildError struct {
	out string
	err error
}

func (e *buildError) Error() string { return e.err.Error() + ": " + e.out }

// executorProc is a remote executor (ours or the reference) registered with a registry.
type executorProc struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	output *lockedBuffer
	done   chan struct{}
}

// startRemoteExecutor starts `<bin> <args…> --remote/--registry URL --environment-id env
// --registration-bearer-stdin` — reference release ref, or ours when ref is nil — writes the
// bearer on stdin, and stops it in Cleanup.
func startRemoteExecutor(t testing.TB, ref *refbin.Release, registryURL, env, bearer string) *executorProc {
	t.Helper()
	var cmd *exec.Cmd
	if ref != nil {
		cmd = exec.Command(ref.Path, "exec-server", "--remote", registryURL, "--environment-id", env, "--registration-bearer-stdin")
	} else {
		cmd = exec.Command(oursBinary(t), "remote", "--registry", registryURL, "--environment-id", env, "--registration-bearer-stdin")
	}
	home := codexHome(t)
	cmd.Env = []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + home, "CODEX_HOME=" + home,
		"RUST_LOG=" + envOr("EXECUTOR_INTEROP_RUST_LOG", "warn")}
	out := &lockedBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &executorProc{cmd: cmd, stdin: stdin, output: out, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill()
			<-p.done
		}
		stdin.Close()
		if t.Failed() {
			t.Logf("executor output:\n%s", out.String())
		}
	})
	if _, err := io.WriteString(stdin, bearer+"\n"); err != nil {
		t.Fatal(err)
	}
	return p
}

// runExec runs `executor exec` against the registry and returns stdout, stderr and the exit
// code.
func runExec(t testing.TB, ctx context.Context, reg *ourRegistry, env string, stdout io.Writer, argv ...string) (stderr string, code int) {
	t.Helper()
	args := append([]string{"exec", "--registry", reg.URL, "--environment-id", env, "--token-file", reg.TokenFile, "--"}, argv...)
	cmd := exec.CommandContext(ctx, oursBinary(t), args...)
	var errBuf strings.Builder
	cmd.Stdout, cmd.Stderr = stdout, &errBuf
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		return errBuf.String(), ee.ExitCode()
	}
	if err != nil {
		t.Fatalf("running executor exec: %v (stderr %s)", err, errBuf.String())
	}
	return errBuf.String(), 0
}
