package e2e_test

import (
	"crypto/rand"
	"encoding/json"
	"fmt"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/execlab/executor/internal/refbin"
)

// How the released codex CLI (0.169.0 and 0.171.0 alike) is pointed at a remote
// exec-server and at an offline model:
//
//   - CODEX_EXEC_SERVER_URL=ws://HOST:PORT in the CLI's environment makes that exec-server the
//     CLI's only environment (id "remote"; the local one is dropped), so every exec_command
//     call becomes a process/start there, and the CLI's project discovery (AGENTS.md, .git,
//     skills) becomes fs/getMetadata there. Alternatively $CODEX_HOME/environments.toml:
//     default = "ID", include_local = false, and [[environments]] id = "ID", url = "ws://…".
//   - $CODEX_HOME/config.toml selects a custom Responses API provider: model_provider = "x",
//     [model_providers.x] base_url = "http://127.0.0.1:PORT/v1", wire_api = "responses",
//     env_key = "<variable holding the API key>"; `codex exec --skip-git-repo-check` then
//     runs offline.

// ensureCodexDaemonDir creates /tmp/codex-daemon-<euid> as codex leaves it on real machines
// (the shared background server's directory), removing it at cleanup only if it created it.
// Sandboxed commands must work with it present.
func ensureCodexDaemonDir(t *testing.T) {
	t.Helper()
	dir := fmt.Sprintf("/tmp/codex-daemon-%d", os.Geteuid())
	if _, err := os.Lstat(dir); err == nil {
		return
	}
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatalf("creating %s: %v", dir, err)
	}
	t.Cleanup(func() { _ = os.Remove(dir) })
}

// lockedBuffer collects a child's stderr while the test reads it.
type lockedBuffer = refbin.LockedBuffer

// execServer is a running exec-server (ours or the reference) with its stderr.
type execServer struct {
	name   string
	url    string
	stderr *lockedBuffer
	// noiseEnv, when set, is how the CLI reaches this server instead of url: as a Noise
	// relay environment (CODEX_EXEC_SERVER_NOISE_*, spec/registry-auth.md §5.1).
	noiseEnv []string
}

var wsURLLine = regexp.MustCompile(`ws://127\.0\.0\.1:[0-9]+`)

// startExecServer starts bin with args, waits for the ws:// URL it prints on stdout, and at
// cleanup sends SIGTERM, killing it if it has not exited within 5 s.
func startExecServer(t *testing.T, name, bin string, env []string, args ...string) *execServer {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	s, m := startPrinting(t, name, cmd, wsURLLine, 20*time.Second, "its URL")
	s.url = m[0]
	return s
}

// startPrinting starts cmd as the server name, waits up to within for the first stdout
// line matching re (what names it in failures) and returns the server with that match's
// submatches. Cleanup sends SIGTERM and kills after 5 s, failing the test if it had to.
func startPrinting(t *testing.T, name string, cmd *exec.Cmd, re *regexp.Regexp, within time.Duration, what string) (*execServer, []string) {
	t.Helper()
	s := &execServer{name: name, stderr: &lockedBuffer{}}
	cmd.Stderr = s.stderr
	p := refbin.Launch(t, cmd, &refbin.LaunchOptions{Line: re, LineTimeout: within, Exit: refbin.ExitOnSIGTERM, Name: name + " (" + what + ")"})
	m := p.Match
	return s, m
}

// codexMode is one way of running `codex exec` with respect to sandboxing.
type codexMode struct {
	name        string
	flags       []string
	sandboxed   bool   // process/start must carry a sandbox
	sandboxType string // process/start result's sandboxType
	// outsideWrite is what a write outside the workspace and temporary directories must
	// report: "allowed" unsandboxed, "denied" under workspace-write.
	outsideWrite string
}

var codexModes = []codexMode{
	{"bypass", []string{"--dangerously-bypass-approvals-and-sandbox"}, false, "none", "allowed"},
	{"workspace-write", []string{"-s", "workspace-write"}, true, "linuxSeccomp", "denied"},
}

// TestCodexCLI_ExecThroughExecutor runs the released codex CLI (`codex exec`, each release
// in refbin.Versions) against `executor serve` as its exec-server, with a scripted offline
// model that asks for one shell command, unsandboxed and under -s workspace-write. It
// asserts that the command ran through our server (the CLI's process/start, seen on a
// logging proxy, and our debug log), and that its output, computed by the shell so that it
// appears nowhere in the request, came back to the model. The same runs against each
// release's own `codex exec-server` are the control: they pass when the test's setup is
// right, so a failure only in "ours" is ours. On failure it logs the whole exec-server
// exchange; CODEX_E2E_VERBOSE=1 logs it for passing runs too (to compare the two servers).
func TestCodexCLI_ExecThroughExecutor(t *testing.T) {
	startCodexCLITest(t) // no release at all: skip before building anything (CI=true: any missing release fails)
	ours := startOurExecServer(t)
	refbin.ForEachRelease(t, func(t *testing.T, rel refbin.Release) {
		reference := startReferenceExecServer(t, rel)
		for _, srv := range []*execServer{ours, reference} {
			for _, mode := range codexModes {
				name := "ours"
				if srv == reference {
					name = "reference"
				}
				t.Run(name+"/"+mode.name, func(t *testing.T) { runCodexExec(t, rel, srv, srv == ours, mode, false) })
			}
		}
		// The other way to name an exec-server: $CODEX_HOME/environments.toml.
		t.Run("ours/bypass-environments.toml-direct", func(t *testing.T) { runCodexExec(t, rel, ours, true, codexModes[0], true) })
	})
}

// startOurExecServer starts `executor serve` on a loopback WebSocket with a fresh HOME
// and TMPDIR, for the codex CLI tests.
func startOurExecServer(t *testing.T) *execServer {
	serverTmp := t.TempDir()
	return startExecServer(t, "executor serve", remoteExecutorBin(t),
		[]string{serverPATH, "HOME=" + serverTmp, "TMPDIR=" + serverTmp},
		"serve", "--listen", "ws://127.0.0.1:0", "--log-level", "debug")
}

// startReferenceExecServer starts rel's `codex exec-server`, the control of the codex
// CLI tests, with its own CODEX_HOME (also its HOME) and TMPDIR.
func startReferenceExecServer(t *testing.T, rel refbin.Release) *execServer {
	refHome := refbin.CodexHome(t)
	refTmp := filepath.Join(refHome, "tmp")
	if err := os.Mkdir(refTmp, 0o755); err != nil {
		t.Fatal(err)
	}
	return startExecServer(t, "codex "+rel.Version+" exec-server", rel.Path,
		[]string{serverPATH, "HOME=" + refHome, "TMPDIR=" + refTmp, "CODEX_HOME=" + refHome},
		"exec-server", "--listen", "ws://127.0.0.1:0")
}

// serverPATH is the exec-servers' PATH in the codex CLI tests.
const serverPATH = "PATH=/usr/local/bin:/usr/bin:/bin"

// runCodexExec runs one `codex exec` against srv and checks the round trip. The CLI finds
// srv through CODEX_EXEC_SERVER_URL, via the logging proxy; or, when viaEnvironmentsToml is
// set, through $CODEX_HOME/environments.toml (without the local environment) and directly,
// as a user's CLI connects, so that only srv's debug log (ours) shows what ran.
func runCodexExec(t *testing.T, rel refbin.Release, srv *execServer, isOurs bool, mode codexMode, viaEnvironmentsToml bool) {
	h := newCLIHome(t)
	codexHome, userHome, work := h.codexHome, h.userHome, h.work
	outside := filepath.Join(userHome, "outside-write") // not under the workspace, /tmp or $TMPDIR

	a, b := randomFactor(t), randomFactor(t)
	marker := fmt.Sprintf("e2e-marker-%d", a*b)
	wantOutside := "e2e-outside-write=" + mode.outsideWrite
	// The shell computes the marker, so it reaches the model only if the command really ran;
	// proof.txt is a write inside the workspace, outside-write one that only bypass allows.
	shellCmd := fmt.Sprintf(`m=e2e-marker-$((%d*%d)); echo "$m" > proof.txt && cat proof.txt; `+
		`if (echo x > '%s') 2>/dev/null; then echo e2e-outside-write=allowed; else echo e2e-outside-write=denied; fi`, a, b, outside)
	finalText := fmt.Sprintf("e2e-final-%d", a)
	model := newScriptedModel(t, shellCmd, finalText)
	serverURL := srv.url
	var tap *wsTap
	if !viaEnvironmentsToml && srv.noiseEnv == nil {
		tap = startWSTap(t, srv.url)
		serverURL = tap.URL()
	}
	writeScriptedModelConfig(t, codexHome, model, "")

	env := h.env()
	if srv.noiseEnv != nil {
		env = append(env, srv.noiseEnv...)
	} else if viaEnvironmentsToml {
		environments := fmt.Sprintf("default = \"e2e-remote\"\ninclude_local = false\n\n[[environments]]\nid = \"e2e-remote\"\nurl = %q\n", serverURL)
		if err := os.WriteFile(filepath.Join(codexHome, "environments.toml"), []byte(environments), 0o644); err != nil {
			t.Fatal(err)
		}
	} else {
		env = append(env, "CODEX_EXEC_SERVER_URL="+serverURL)
	}

	args := append([]string{"--strict-config", "--skip-git-repo-check", "--ephemeral", "--color", "never",
		"-C", work}, mode.flags...)
	args = append(args, "Run the command the script asks for.")
	startedBefore := countStarted(srv, mode)
	stdout, stderr, runErr := runCodexCLI(rel, work, env, 30*time.Second, args...)

	reqs, problems := model.snapshot()
	var msgs []tappedMessage
	if tap != nil {
		msgs = tap.exchange()
	}
	run := &cliRun{t: t, srv: srv, stdout: stdout, stderr: stderr, msgs: msgs, maxMsg: 1000}
	fail := run.fail
	defer run.logIfFailed()

	run.checkRan(runErr, problems)
	if !strings.Contains(stdout, finalText) {
		fail("codex exec stdout lacks the model's final message %q", finalText)
	}

	// The tool output the CLI sent back to the model carries the marker the shell computed.
	output, answered := firstToolOutput(reqs)
	switch {
	case len(reqs) < 2 || !answered:
		fail("the CLI never sent the exec_command output back to the model (%d model requests)", len(reqs))
	case strings.Contains(output, "Can't remount readonly on /newroot/tmp/codex-daemon-"):
		fail("sandboxed command failed because /tmp/codex-daemon-%d exists (known sandbox/mounts_linux.go bug): %q", os.Geteuid(), output)
	case !strings.Contains(output, marker) || !strings.Contains(output, "exited with code 0"):
		fail("tool output sent to the model = %q, want exit code 0 and %q", output, marker)
	case !strings.Contains(output, wantOutside):
		fail("tool output sent to the model = %q, want %q", output, wantOutside)
	}
	if got, err := os.ReadFile(filepath.Join(work, "proof.txt")); err != nil || strings.TrimSpace(string(got)) != marker {
		fail("proof.txt in the workspace = %q (%v), want %q", got, err, marker)
	}
	if _, err := os.Stat(outside); (err == nil) != (mode.outsideWrite == "allowed") {
		fail("%s: stat says %v, want the write %s", outside, err, mode.outsideWrite)
	}

	if tap == nil { // direct: our debug log is the evidence
		if isOurs && countStarted(srv, mode) <= startedBefore {
			fail("our debug log shows no new process started with sandbox_type=%s", mode.sandboxType)
		}
		return
	}
	// The CLI drove this exec-server: initialize, then a process/start running our command,
	// with a sandbox exactly in the sandboxed mode, answered with the expected sandboxType.
	methods := map[string]int{}
	var startID json.RawMessage
	var start struct {
		ProcessID string          `json:"processId"`
		Argv      []string        `json:"argv"`
		Sandbox   json.RawMessage `json:"sandbox"`
	}
	for _, m := range msgs {
		if m.Bad != nil {
			fail("%s sent a frame that is not JSON: %v", map[bool]string{true: "the CLI", false: srv.name}[m.FromClient], m.Bad)
			continue
		}
		if !m.FromClient || m.Msg.Method == "" {
			continue
		}
		methods[m.Msg.Method]++
		if m.Msg.Method == "process/start" && strings.Contains(string(m.Msg.Params), "e2e-marker-$((") {
			startID = m.Msg.ID
			if err := json.Unmarshal(m.Msg.Params, &start); err != nil {
				fail("process/start params: %v", err)
			}
		}
	}
	if methods["initialize"] == 0 {
		fail("the CLI never sent initialize through the proxy; methods seen: %v", methods)
	}
	if startID == nil {
		fail("the CLI sent no process/start for the scripted command; methods seen: %v", methods)
		return
	}
	if hasSandbox := len(start.Sandbox) > 0 && string(start.Sandbox) != "null"; hasSandbox != mode.sandboxed {
		fail("process/start sandbox = %s, want present=%v", start.Sandbox, mode.sandboxed)
	}
	resp, ok := responseTo(msgs, startID)
	var result struct {
		SandboxType string `json:"sandboxType"`
	}
	switch {
	case !ok:
		fail("%s never answered process/start %s", srv.name, startID)
	case resp.Error != nil:
		fail("%s answered process/start with error %s", srv.name, resp.Error)
	case json.Unmarshal(resp.Result, &result) != nil || result.SandboxType != mode.sandboxType:
		fail("process/start result = %s, want sandboxType %q", resp.Result, mode.sandboxType)
	}
	if isOurs && !strings.Contains(srv.stderr.String(), "process_id="+start.ProcessID) {
		fail("our debug log never mentions process_id=%s", start.ProcessID)
	}
	t.Logf("codex %s → %s (%s): methods %v; tool output %q", rel.Version, srv.name, mode.name, methods, output)
}

// writeScriptedModelConfig writes $CODEX_HOME/config.toml for a CLI that talks to model
// (offline, no retries), with extra TOML appended.
func writeScriptedModelConfig(t *testing.T, codexHome string, model *scriptedModel, extra string) {
	t.Helper()
	config := fmt.Sprintf(`model = "e2e-scripted"
model_provider = "e2e"
check_for_update_on_startup = false

[model_providers.e2e]
name = "e2e scripted model"
base_url = %q
wire_api = "responses"
env_key = "E2E_MODEL_API_KEY"
request_max_retries = 0
stream_max_retries = 0
`, model.BaseURL()) + extra
	if err := os.WriteFile(filepath.Join(codexHome, "config.toml"), []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
}

// countStarted counts our debug log's "process started" lines with mode's sandbox type.
func countStarted(srv *execServer, mode codexMode) int {
	n := 0
	for _, line := range strings.Split(srv.stderr.String(), "\n") {
		if strings.Contains(line, `msg="process started"`) && strings.Contains(line, "sandbox_type="+mode.sandboxType) {
			n++
		}
	}
	return n
}

// randomFactor returns a random integer in [1000, 9999].
func randomFactor(t *testing.T) int64 {
	n, err := rand.Int(rand.Reader, big.NewInt(9000))
	if err != nil {
		t.Fatal(err)
	}
	return n.Int64() + 1000
}
