package e2e_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/execlab/executor/internal/refbin"
)

// TestCodexCLI_CredentialMaskingThroughExecutor: the released codex CLI (each release in
// refbin.Versions) with features.credential_masking on a managed-network profile sends
// proxy.credentialMasking to `executor serve`, which advertises credentialMasking: the
// CLI does not warn "Credential masking is unavailable on environment", and the model's
// command sees a ghp_masked dummy and the broker marker, never the real GITHUB_TOKEN.
// The same run against the release's own exec-server is the control.
func TestCodexCLI_CredentialMaskingThroughExecutor(t *testing.T) {
	ignore := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, ignore) })
	refbin.Releases(t)
	ensureCodexDaemonDir(t)

	serverTmp := t.TempDir()
	serverEnv := []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + serverTmp, "TMPDIR=" + serverTmp}
	ours := startExecServer(t, "executor serve", remoteExecutorBin(t), append(serverEnv, "CODEX_HOME="+filepath.Join(serverTmp, "codex"), "GITHUB_TOKEN="+realPAT),
		"serve", "--listen", "ws://127.0.0.1:0", "--log-level", "debug")

	refbin.ForEachRelease(t, func(t *testing.T, rel refbin.Release) {
		refHome := refbin.CodexHome(t)
		refTmp := filepath.Join(refHome, "tmp")
		if err := os.Mkdir(refTmp, 0o755); err != nil {
			t.Fatal(err)
		}
		reference := startExecServer(t, "codex "+rel.Version+" exec-server", rel.Path,
			append(serverEnv[:1:1], "HOME="+refHome, "TMPDIR="+refTmp, "CODEX_HOME="+refHome, "GITHUB_TOKEN="+realPAT),
			"exec-server", "--listen", "ws://127.0.0.1:0")
		t.Run("ours", func(t *testing.T) { runCredentialMaskingExec(t, rel, ours) })
		t.Run("reference", func(t *testing.T) { runCredentialMaskingExec(t, rel, reference) })
	})
}

// realPAT is the exec-servers' GITHUB_TOKEN: the CLI's envPolicy inherits the
// executor's own environment.
const realPAT = "ghp_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"

func runCredentialMaskingExec(t *testing.T, rel refbin.Release, srv *execServer) {
	const real = realPAT
	// A login shell keeps its profiles and runs unmasked (the CLI warns "unavailable for
	// this shell startup"): allow_login_shell=false makes the CLI launch bash -c.
	run := runManagedCodexExec(t, rel, srv, `echo "gh=$GITHUB_TOKEN"; echo "active=$CODEX_NETWORK_PROXY_CREDENTIAL_BROKER_ACTIVE"`,
		managedExtras{features: "credential_masking = true\n", args: []string{"-c", "allow_login_shell=false"}})
	failed := false
	fail := func(format string, args ...any) {
		failed = true
		t.Errorf(format, args...)
	}
	defer func() {
		if failed || os.Getenv("CODEX_E2E_VERBOSE") != "" {
			t.Logf("codex exec stdout:\n%s\ncodex exec stderr:\n%s", run.stdout.String(), tail(run.stderr.String()))
			t.Logf("exec-server exchange (%d messages):\n%s", len(run.msgs), transcript(run.msgs, 1500))
			t.Logf("%s stderr:\n%s", srv.name, tail(srv.stderr.String()))
		}
	}()
	if run.runErr != nil {
		fail("codex exec: %v", run.runErr)
	}
	if run.problems != "" {
		fail("scripted model: %s", run.problems)
	}
	const unavailable = "Credential masking is unavailable"
	for _, line := range strings.Split(run.stdout.String()+run.stderr.String(), "\n") {
		if strings.Contains(line, unavailable) {
			fail("the CLI warned: %s", line)
		}
	}
	output, answered := run.output()
	switch {
	case !answered:
		fail("the CLI never sent the exec_command output back to the model (%d model requests)", len(run.reqs))
	case strings.Contains(output, real):
		fail("the command saw the real token: %q", output)
	case !regexp.MustCompile(`gh=ghp_masked[A-Za-z0-9]{30}\b`).MatchString(output) || !strings.Contains(output, "active=1"):
		fail("tool output %q, want a ghp_masked dummy and the broker marker", output)
	}
	masking := false
	for _, m := range run.msgs {
		if m.FromClient && m.Msg.Method == "process/start" {
			var p struct {
				NetworkProxy struct {
					Proxy struct {
						CredentialMasking bool `json:"credentialMasking"`
					} `json:"proxy"`
				} `json:"networkProxy"`
			}
			if json.Unmarshal(m.Msg.Params, &p) == nil && p.NetworkProxy.Proxy.CredentialMasking {
				masking = true
			}
		}
	}
	if !masking {
		fail("no process/start carried proxy.credentialMasking")
	}
	t.Logf("codex %s → %s: tool output %q", rel.Version, srv.name, output)
}
