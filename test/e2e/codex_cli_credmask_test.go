package e2e_test

import (
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/execlab/executor/internal/refbin"
)

// TestCodexCLI_CredentialMaskingThroughExecutor: the released codex CLI (each release in
// refbin.Versions) with features.credential_masking on a managed-network profile sends
// proxy.credentialMasking to `executor serve`, which advertises credentialMasking: the
// CLI does not warn "Credential masking is unavailable", and the model's
// command sees a ghp_masked dummy and the broker marker, never the real GITHUB_TOKEN.
// The same run against the release's own exec-server is the control.
func TestCodexCLI_CredentialMaskingThroughExecutor(t *testing.T) {
	oursAndReference(t, []string{"GITHUB_TOKEN=" + realPAT}, runCredentialMaskingExec)
}

// TestCodexCLI_CredentialMaskingThroughRelay is the same through a registry: the CLI as
// a Noise relay harness of `executor dev`, whose executor holds the real GITHUB_TOKEN.
func TestCodexCLI_CredentialMaskingThroughRelay(t *testing.T) {
	startCodexCLITest(t)
	srv := startDevForNoise(t, "GITHUB_TOKEN="+realPAT)
	refbin.ForEachRelease(t, func(t *testing.T, rel refbin.Release) { runCredentialMaskingExec(t, rel, srv) })
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
	fail, report := run.checker(t, srv)
	defer report()
	const unavailable = "Credential masking is unavailable"
	for _, line := range strings.Split(run.stdout.String()+run.stderr.String(), "\n") {
		if strings.Contains(line, unavailable) {
			fail("the CLI warned: %s", line)
		}
	}
	output, ok := run.answer(fail)
	if ok && strings.Contains(output, real) {
		fail("the command saw the real token: %q", output)
	} else if ok && (!regexp.MustCompile(`gh=ghp_masked[A-Za-z0-9]{30}\b`).MatchString(output) || !strings.Contains(output, "active=1")) {
		fail("tool output %q, want a ghp_masked dummy and the broker marker", output)
	}
	if srv.noiseEnv != nil { // through the relay the exchange is end-to-end encrypted: the output is the proof
		t.Logf("codex %s → %s (relay): tool output %q", rel.Version, srv.name, output)
		return
	}
	masking := slices.ContainsFunc(run.msgs, func(m tappedMessage) bool {
		return m.FromClient && m.Msg.Method == "process/start" && strings.Contains(string(m.Msg.Params), `"credentialMasking":true`)
	})
	if !masking {
		fail("no process/start carried proxy.credentialMasking")
	}
	t.Logf("codex %s → %s: tool output %q", rel.Version, srv.name, output)
}
