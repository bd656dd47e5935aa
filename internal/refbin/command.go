package refbin

import (
	"os/exec"
	"testing"
)

// Command returns a command running args on release r, or on ours (the executor binary at
// path ours) when r is nil, with a minimal PATH and a fresh home: for a release HOME and
// CODEX_HOME are one CodexHome and RUST_LOG is warn; for ours HOME is a temp dir. Callers
// may add to cmd.Env.
func Command(tb testing.TB, r *Release, ours string, args ...string) *exec.Cmd {
	tb.Helper()
	const path = "PATH=/usr/local/bin:/usr/bin:/bin"
	if r != nil {
		home := CodexHome(tb)
		cmd := exec.Command(r.Path, args...)
		cmd.Env = []string{path, "HOME=" + home, "CODEX_HOME=" + home, "RUST_LOG=warn"}
		return cmd
	}
	cmd := exec.Command(ours, args...)
	cmd.Env = []string{path, "HOME=" + tb.TempDir()}
	return cmd
}

// RemoteCommand returns Command for an executor that registers environment env with the
// registry at registryURL and reads its registration bearer from stdin: `exec-server
// --remote` on release r, `remote --registry` on ours (r nil) followed by oursArgs.
func RemoteCommand(tb testing.TB, r *Release, ours, registryURL, env string, oursArgs ...string) *exec.Cmd {
	tb.Helper()
	if r != nil {
		return Command(tb, r, "", "exec-server", "--remote", registryURL, "--environment-id", env, "--registration-bearer-stdin")
	}
	args := append([]string{"remote", "--registry", registryURL, "--environment-id", env, "--registration-bearer-stdin"}, oursArgs...)
	return Command(tb, nil, ours, args...)
}
