package e2e_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/execlab/executor/internal/refbin"
)

// cliHome is one `codex exec` run's own directories, under a fresh CodexHome.
type cliHome struct {
	codexHome, userHome, work, tmp string
}

// newCLIHome makes the directories of one CLI run.
func newCLIHome(t *testing.T) cliHome {
	t.Helper()
	base := refbin.CodexHome(t)
	h := cliHome{codexHome: filepath.Join(base, "codex"), userHome: filepath.Join(base, "home"),
		work: filepath.Join(base, "work"), tmp: filepath.Join(base, "tmp")}
	for _, d := range []string{h.codexHome, h.userHome, h.work, h.tmp} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return h
}

// env is the CLI's environment in h, talking to the scripted model, with extra variables
// and the test's RUST_LOG when set.
func (h cliHome) env(extra ...string) []string {
	env := append([]string{
		"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + h.userHome, "TMPDIR=" + h.tmp,
		"CODEX_HOME=" + h.codexHome, "E2E_MODEL_API_KEY=e2e-not-a-secret",
	}, extra...)
	if v := os.Getenv("RUST_LOG"); v != "" {
		env = append(env, "RUST_LOG="+v)
	}
	return env
}

// cliRun is one finished `codex exec` against an exec-server: its output and the
// exchange a wsTap recorded (nil without a tap), and whether a check failed.
type cliRun struct {
	t              *testing.T
	srv            *execServer
	stdout, stderr string
	msgs           []tappedMessage
	maxMsg         int // transcript's bound on one message, in bytes
	failed         bool
}

// fail reports a failed check (the test goes on).
func (r *cliRun) fail(format string, args ...any) {
	r.failed = true
	r.t.Errorf(format, args...)
}

// logIfFailed logs the run when a check failed or CODEX_E2E_VERBOSE is set; callers
// defer it.
func (r *cliRun) logIfFailed() {
	if r.failed || os.Getenv("CODEX_E2E_VERBOSE") != "" {
		r.t.Logf("codex exec stdout:\n%s\ncodex exec stderr:\n%s", r.stdout, tail(r.stderr))
		r.t.Logf("exec-server exchange (%d messages):\n%s", len(r.msgs), transcript(r.msgs, r.maxMsg))
		r.t.Logf("%s stderr:\n%s", r.srv.name, tail(r.srv.stderr.String()))
	}
}

// firstToolOutput returns the first exec_command output the CLI sent back to the model.
func firstToolOutput(reqs []modelRequest) (string, bool) {
	for _, r := range reqs {
		if output, ok := toolOutput(r); ok {
			return output, true
		}
	}
	return "", false
}

// checkRan fails when the CLI failed or the scripted model saw a problem.
func (r *cliRun) checkRan(runErr error, problems string) {
	if runErr != nil {
		r.fail("codex exec: %v", runErr)
	}
	if problems != "" {
		r.fail("scripted model: %s", problems)
	}
}

// runCodexCLI runs `codex exec args…` of release rel in work with env, for at most
// within, and returns its output.
func runCodexCLI(rel refbin.Release, work string, env []string, within time.Duration, args ...string) (stdout, stderr string, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	cmd := exec.CommandContext(ctx, rel.Path, append([]string{"exec"}, args...)...)
	cmd.Dir = work
	cmd.Env = env
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err = cmd.Run()
	return out.String(), errb.String(), err
}

// startCodexCLITest begins every test of the released CLI: a goroutine-leak check at the
// test's end (registered first, so it runs last), at least one release (under CI=true
// every release; elsewhere a missing one skips), and the CLI's daemon directory.
func startCodexCLITest(t *testing.T) {
	t.Helper()
	ignore := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, ignore) })
	refbin.Releases(t)
	ensureCodexDaemonDir(t)
}
