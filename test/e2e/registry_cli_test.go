package e2e_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/execlab/executor/internal/refbin"
)

// startLineProcess starts bin with args, returns the first stdout line matching re, and
// stops the process (SIGTERM) in Cleanup, failing if it does not exit with status 0 within 5 s.
func startLineProcess(t *testing.T, re *regexp.Regexp, args ...string) []string {
	t.Helper()
	cmd := exec.Command(remoteExecutorBin(t), args...)
	cmd.Env = []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + t.TempDir(), "TMPDIR=" + t.TempDir()}
	return refbin.Launch(t, cmd, &refbin.LaunchOptions{Line: re, Exit: refbin.ExitClean, Name: args[0]}).Match
}

// startDev runs `executor dev` and returns the submatches of the exec command it prints
// (devExecLine: registry URL, environment id, token file).
func startDev(t *testing.T) []string {
	t.Helper()
	return startLineProcess(t, devExecLine, "dev")
}

// runExecCLI runs `executor exec` with args and returns stdout and the exit code.
func runExecCLI(t *testing.T, args ...string) (string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, remoteExecutorBin(t), append([]string{"exec"}, args...)...)
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		return out.String(), ee.ExitCode()
	}
	if err != nil {
		t.Fatalf("executor exec: %v (stderr %s)", err, errb.String())
	}
	return out.String(), 0
}

// TestDev_PrintsWorkingExecCommand: `executor dev` starts registry + rendezvous + executor in
// one process and prints an exec command that works.
func TestDev_PrintsWorkingExecCommand(t *testing.T) {
	m := startDev(t)
	out, code := runExecCLI(t, "--registry", m[1], "--environment-id", m[2], "--token-file", m[3], "--", "sh", "-c", "echo hello; exit 3")
	if out != "hello\n" || code != 3 {
		t.Errorf("exec via executor dev: got %q exit %d, want %q exit 3", out, code, "hello\n")
	}
}

// TestRegistryServe_CLI: `executor registry serve` prints its URL; a remote executor and
// `executor exec` work through it; `executor registry token` prints a scoped token line; a
// token scoped to another environment is refused.
func TestRegistryServe_CLI(t *testing.T) {
	dir := t.TempDir()
	tokOut, err := exec.Command(remoteExecutorBin(t), "registry", "token", "--roles", "executor,harness", "--envs", "env-cli").Output()
	if err != nil {
		t.Fatal(err)
	}
	line := strings.TrimSpace(string(tokOut))
	if !regexp.MustCompile(`^\S+ roles=executor,harness envs=env-cli$`).MatchString(line) {
		t.Fatalf("registry token: got %q, want TOKEN roles=executor,harness envs=env-cli", line)
	}
	other, err := exec.Command(remoteExecutorBin(t), "registry", "token", "--roles", "*", "--envs", "elsewhere").Output()
	if err != nil {
		t.Fatal(err)
	}
	tokens := filepath.Join(dir, "tokens")
	if err := os.WriteFile(tokens, []byte("# cli test\n"+line+"\n"+string(other)), 0o600); err != nil {
		t.Fatal(err)
	}
	m := startLineProcess(t, regexp.MustCompile(`^(http://127\.0\.0\.1:\d+)$`), "registry", "serve", "--listen", "127.0.0.1:0",
		"--db", filepath.Join(dir, "r.db"), "--token-file", tokens)
	url := m[1]
	token := strings.Fields(line)[0]
	startOurRemote(t, url, "env-cli", token)
	execTokens := filepath.Join(dir, "exec-token")
	if err := os.WriteFile(execTokens, []byte(token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var out string
	var code int
	deadline := time.Now().Add(20 * time.Second)
	for {
		out, code = runExecCLI(t, "--registry", url, "--environment-id", "env-cli", "--token-file", execTokens, "--", "sh", "-c", "echo hi; exit 7")
		if code == 7 || time.Now().After(deadline) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if out != "hi\n" || code != 7 {
		t.Errorf("exec through registry serve: got %q exit %d, want %q exit 7", out, code, "hi\n")
	}
	wrong := filepath.Join(dir, "wrong-token")
	if err := os.WriteFile(wrong, other, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, code := runExecCLI(t, "--registry", url, "--environment-id", "env-cli", "--token-file", wrong, "--", "true"); code != 255 {
		t.Errorf("exec with a token scoped to another environment: got exit %d, want 255 (an authentication failure, as ssh)", code)
	}
	if _, code := runExecCLI(t, "--", "true"); code != 2 {
		t.Errorf("exec without a target: got exit %d, want 2", code)
	}
}
