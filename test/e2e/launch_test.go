package e2e_test

import (
	"os/exec"
	"testing"

	"github.com/execlab/executor/internal/refbin"
)

// oursFor returns our executor binary when ref is nil (ours runs), "" otherwise.
func oursFor(t *testing.T, ref *refbin.Release) string {
	t.Helper()
	if ref != nil {
		return ""
	}
	return remoteExecutorBin(t)
}

// startRemote starts an executor registered as env with the registry at registryURL, with
// the bearer on stdin (kept open: stdin EOF may mean "exit" to an executor): release ref,
// or ours (`executor remote` + oursArgs) when ref is nil. Cleanup stops it (SIGTERM, then
// SIGKILL after 5 s) and logs its output when the test failed.
func startRemote(t *testing.T, ref *refbin.Release, registryURL, env, bearer string, oursArgs ...string) *refbin.Proc {
	t.Helper()
	cmd := refbin.RemoteCommand(t, ref, oursFor(t, ref), registryURL, env, oursArgs...)
	return refbin.Launch(t, cmd, &refbin.LaunchOptions{NoLine: true, Stdin: bearer + "\n", Name: "executor"})
}

// startServe runs `executor serve --listen ws://127.0.0.1:0` with default flags and waits
// for its URL; Cleanup stops it and logs its output when the test failed.
func startServe(t *testing.T) *refbin.Proc {
	t.Helper()
	cmd := exec.Command(remoteExecutorBin(t), "serve", "--listen", "ws://127.0.0.1:0")
	cmd.Env = []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + t.TempDir(), "TMPDIR=" + t.TempDir()}
	return refbin.Launch(t, cmd, &refbin.LaunchOptions{Line: wsURLLine, Name: "executor serve"})
}
