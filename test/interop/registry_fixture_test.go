package interop_test

import (
	"context"
	"io"
	"os/exec"
	"strings"
	"testing"

	"github.com/execlab/executor/internal/refbin"
	"github.com/execlab/executor/registry/registrytest"
)

// ourRegistry is the self-hosted registry + rendezvous (registry/server, registry/rendezvous)
// running in the test process on 127.0.0.1, with one token file (registry/registrytest).
type ourRegistry = registrytest.Registry

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
	return registrytest.Start(t, &registrytest.Options{PublicURL: front})
}

// oursBinary builds cmd/executor once per test process.
func oursBinary(t testing.TB) string {
	t.Helper()
	return refbin.Executor(t)
}

// startOnlineExecutor starts a remote executor (reference release ref, or ours when ref is
// nil) registered as env with reg, and waits until the rendezvous sees it online.
func startOnlineExecutor(t testing.TB, ctx context.Context, ref *refbin.Release, reg *ourRegistry, env string) {
	t.Helper()
	startRemoteExecutor(t, ref, reg.URL, env, reg.Token)
	reg.WaitOnline(ctx, t, env, true)
}

// startRemoteExecutor starts `<bin> <args…> --remote/--registry URL --environment-id env
// --registration-bearer-stdin` — reference release ref, or ours when ref is nil — writes the
// bearer on stdin (kept open), and stops it in Cleanup (SIGTERM, then SIGKILL after 5 s).
func startRemoteExecutor(t testing.TB, ref *refbin.Release, registryURL, env, bearer string) *refbin.Proc {
	t.Helper()
	var ours string
	if ref == nil {
		ours = oursBinary(t)
	}
	cmd := refbin.RemoteCommand(t, ref, ours, registryURL, env)
	cmd.Env = append(cmd.Env, "RUST_LOG="+envOr("EXECUTOR_INTEROP_RUST_LOG", "warn"))
	return refbin.Launch(t, cmd, &refbin.LaunchOptions{NoLine: true, Stdin: bearer + "\n", Name: "executor"})
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
