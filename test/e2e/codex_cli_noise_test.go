package e2e_test

import (
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/execlab/executor/internal/refbin"
)

// TestCodexCLI_NoiseHarnessThroughOurExecutor: the released codex CLI as a Noise relay
// harness (CODEX_EXEC_SERVER_NOISE_*, spec/registry-auth.md §5.1) dials `executor dev`
// (our registry, rendezvous and executor in one process). The release's Rust initiator
// does the hybrid IK handshake with our responder (package noise: message 2, Split, the
// transport records), then the scripted command runs and its output returns to the model;
// our debug log shows the process starting. This is the wire proof of the responder side
// against each release; test/interop covers our initiator against the releases' responders.
func TestCodexCLI_NoiseHarnessThroughOurExecutor(t *testing.T) {
	startCodexCLITest(t)
	srv := startDevForNoise(t)
	refbin.ForEachRelease(t, func(t *testing.T, rel refbin.Release) {
		before := strings.Count(srv.stderr.String(), handshakeOK)
		runCodexExec(t, rel, srv, true, codexModes[0], false)
		if after := strings.Count(srv.stderr.String(), handshakeOK); after <= before {
			t.Errorf("our debug log shows no new completed responder handshake (%q: %d before, %d after)", handshakeOK, before, after)
		}
	})
}

// handshakeOK is our executor's debug line for a relay stream whose Noise handshake
// completed (executor remote, noise_event=handshake).
const handshakeOK = `noise_event=handshake noise_outcome=ok`

var devExecLine = regexp.MustCompile(`exec --registry (\S+) --environment-id (\S+) --token-file (\S+) --`)

// startDevForNoise starts `executor dev --log-level debug`, reads the registry URL,
// environment id and harness token it prints, and returns it as an execServer reached
// through the Noise variables; extraEnv is added to its environment. Cleanup sends SIGTERM
// (kill after 5 s).
func startDevForNoise(t *testing.T, extraEnv ...string) *execServer {
	t.Helper()
	home := t.TempDir()
	cmd := exec.Command(remoteExecutorBin(t), "dev", "--log-level", "debug")
	cmd.Env = append([]string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + home, "TMPDIR=" + home}, extraEnv...)
	s, m := startPrinting(t, "executor dev", cmd, devExecLine, 30*time.Second, "its exec command")
	line, err := os.ReadFile(m[3]) // "<token> <role> <environment>" (cmd/executor/dev.go)
	if err != nil {
		t.Fatal(err)
	}
	token := strings.Fields(string(line))
	if len(token) == 0 {
		t.Fatalf("token file %s is empty", m[3])
	}
	s.noiseEnv = []string{
		"CODEX_EXEC_SERVER_NOISE_REGISTRY_URL=" + m[1],
		"CODEX_EXEC_SERVER_NOISE_ENVIRONMENT_ID=" + m[2],
		"CODEX_EXEC_SERVER_NOISE_AUTH_TOKEN=" + token[0],
	}
	return s
}
