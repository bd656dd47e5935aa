package e2e_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/execlab/executor/internal/refbin"
)

// TestCodexCLI_ManagedNetworkThroughExecutor is issue 29's real-CLI proof: the released
// codex CLI (each release in refbin.Versions), in a session with managed networking
// (features.network_proxy, a permission profile with network mode "full" and
// "localhost" allowed), runs the model's command through `executor serve` instead of
// rejecting it ("selected exec-server does not support executor-local network proxy
// launches"), and our proxy's network/policyDecision notifications reach the CLI. The
// command curls a 127.0.0.1 server by the name localhost; the server's answer, a random
// marker, must come back to the model. The exchange is recorded by a logging WebSocket
// proxy (wsTap). The same run against the release's own exec-server is the control.
func TestCodexCLI_ManagedNetworkThroughExecutor(t *testing.T) {
	oursAndReference(t, nil, func(t *testing.T, rel refbin.Release, srv *execServer) {
		runManagedNetworkExec(t, rel, srv, proxiedCurl)
	})
}

// oursAndReference runs run, for each release in refbin.Versions, as the subtests "ours"
// (against one `executor serve` shared by the releases) and "reference" (against the
// release's own exec-server); serverEnv is added to both servers' environment.
func oursAndReference(t *testing.T, serverEnv []string, run func(t *testing.T, rel refbin.Release, srv *execServer)) {
	ignore := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, ignore) })
	refbin.Releases(t)
	ensureCodexDaemonDir(t)

	serverTmp := t.TempDir()
	path := "PATH=/usr/local/bin:/usr/bin:/bin"
	ours := startExecServer(t, "executor serve", remoteExecutorBin(t), append([]string{path, "HOME=" + serverTmp, "TMPDIR=" + serverTmp}, serverEnv...),
		"serve", "--listen", "ws://127.0.0.1:0", "--log-level", "debug")

	refbin.ForEachRelease(t, func(t *testing.T, rel refbin.Release) {
		refHome := refbin.CodexHome(t)
		refTmp := filepath.Join(refHome, "tmp")
		if err := os.Mkdir(refTmp, 0o755); err != nil {
			t.Fatal(err)
		}
		reference := startExecServer(t, "codex "+rel.Version+" exec-server", rel.Path,
			append([]string{path, "HOME=" + refHome, "TMPDIR=" + refTmp, "CODEX_HOME=" + refHome}, serverEnv...),
			"exec-server", "--listen", "ws://127.0.0.1:0")
		t.Run("ours", func(t *testing.T) { run(t, rel, ours) })
		t.Run("reference", func(t *testing.T) { run(t, rel, reference) })
	})
}

// TestCodexCLI_ManagedNetworkThroughRelay is the same session through a registry: the
// released CLI reaches `executor dev` (our registry, rendezvous and executor) as a Noise
// relay harness, and the model's managed-network command runs with its proxy instead of
// being rejected; the marker it fetches through the proxy comes back to the model.
func TestCodexCLI_ManagedNetworkThroughRelay(t *testing.T) {
	startCodexCLITest(t)
	srv := startDevForNoise(t)
	refbin.ForEachRelease(t, func(t *testing.T, rel refbin.Release) { runManagedNetworkExec(t, rel, srv, proxiedCurl) })
}

// TestCodexCLI_TransparentTCPThroughExecutor: the same with transparent TCP (codex
// 0.171.0 only; 0.169.0 has none): the profile sets enable_socks5 and transparent_tcp,
// the CLI (which requires networkProxyTransparentTcp) sends proxy.transparentTcp, and
// the command reaches the server directly by a name the sandbox's resolver answers
// (curl --noproxy '*' http://localhost.:PORT/), captured into the proxy's SOCKS5 policy
// (a socks5_tcp decision allowing localhost). The reference's exec-server is the control.
func TestCodexCLI_TransparentTCPThroughExecutor(t *testing.T) {
	ignore := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, ignore) })
	rel := refbin.ReleaseOf(t, "0.171.0")
	ensureCodexDaemonDir(t)
	ours, reference := startOurExecServer(t), startReferenceExecServer(t, rel)
	t.Run("ours", func(t *testing.T) { runManagedNetworkExec(t, rel, ours, transparentCurl) })
	t.Run("reference", func(t *testing.T) { runManagedNetworkExec(t, rel, reference, transparentCurl) })
}

// netVariant is one managed-network session of runManagedNetworkExec.
type netVariant struct {
	extras   managedExtras // what the session adds to managedNetworkConfig
	curl     string        // the command's curl options and URL, %s = the server's port
	protocol string        // the network/policyDecision protocol that allows localhost
	param    string        // what process/start's networkProxy must carry besides "proxy"
}

var (
	// proxiedCurl goes through the proxy variables (HTTP proxy).
	proxiedCurl = netVariant{curl: "http://localhost:%s/", protocol: "http"}
	// transparentCurl ignores them and is captured (transparent TCP, SOCKS5 policy).
	transparentCurl = netVariant{extras: managedExtras{network: "enable_socks5 = true\ntransparent_tcp = true\n"},
		curl: "--noproxy '*' http://localhost.:%s/", protocol: "socks5_tcp", param: `"transparentTcp":true`}
)

// managedNetworkConfig is the CLI's config.toml addition: a permission profile whose
// network goes through the executor-local proxy, with localhost allowed.
const managedNetworkConfig = `
[features]
network_proxy = true

[permissions.dev]
extends = ":workspace"

[permissions.dev.network]
enabled = true
mode = "full"

[permissions.dev.network.domains]
"localhost" = "allow"
`

// managedRun is one `codex exec` with the managed-network profile against an exec-server,
// its model scripted to run one shell command: what the CLI printed, what it sent the
// model and what crossed the exec-server WebSocket.
type managedRun struct {
	stdout, stderr bytes.Buffer
	runErr         error
	reqs           []modelRequest
	problems       string
	msgs           []tappedMessage
}

// managedExtras are what a runManagedCodexExec caller adds: lines for the [features]
// table, lines for the profile's network table, and `codex exec` arguments (before the
// prompt).
type managedExtras struct {
	features string
	network  string
	args     []string
}

// runManagedCodexExec runs `codex exec` of rel against srv through a wsTap, with
// managedNetworkConfig (plus x) in its config.toml; the scripted model asks for
// shellCmd.
func runManagedCodexExec(t *testing.T, rel refbin.Release, srv *execServer, shellCmd string, x managedExtras) *managedRun {
	base := refbin.CodexHome(t)
	codexHome, userHome, work, tmp := filepath.Join(base, "codex"), filepath.Join(base, "home"),
		filepath.Join(base, "work"), filepath.Join(base, "tmp")
	for _, d := range []string{codexHome, userHome, work, tmp} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	finalText := fmt.Sprintf("e2e-final-%d", randomFactor(t))
	model := newScriptedModel(t, shellCmd, finalText)
	var tap *wsTap // none through the relay: the exchange is end-to-end encrypted
	if srv.noiseEnv == nil {
		tap = startWSTap(t, srv.url)
	}

	writeScriptedModelConfig(t, codexHome, model, strings.NewReplacer("[features]\n", "[features]\n"+x.features,
		"mode = \"full\"\n", "mode = \"full\"\n"+x.network).Replace(managedNetworkConfig))
	env := []string{
		"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + userHome, "TMPDIR=" + tmp,
		"CODEX_HOME=" + codexHome, "E2E_MODEL_API_KEY=e2e-not-a-secret",
	}
	if tap != nil {
		env = append(env, "CODEX_EXEC_SERVER_URL="+tap.URL())
	} else {
		env = append(env, srv.noiseEnv...)
	}
	if v := os.Getenv("RUST_LOG"); v != "" {
		env = append(env, "RUST_LOG="+v)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	args := append([]string{"exec", "--skip-git-repo-check", "--ephemeral", "--color", "never",
		"-c", `default_permissions="dev"`, "-c", `approval_policy="never"`, "-C", work}, x.args...)
	cmd := exec.CommandContext(ctx, rel.Path, append(args, "Run the command the script asks for.")...)
	cmd.Dir = work
	cmd.Env = env
	r := &managedRun{}
	cmd.Stdout, cmd.Stderr = &r.stdout, &r.stderr
	r.runErr = cmd.Run()
	r.reqs, r.problems = model.snapshot()
	if tap != nil {
		r.msgs = tap.exchange()
	}
	return r
}

// checker returns fail, which reports a failure of the run, and report, to defer: when
// the run failed (or CODEX_E2E_VERBOSE is set) it logs the CLI's output, the exchange and
// srv's stderr. A CLI exit error and the scripted model's problems are failures already.
func (r *managedRun) checker(t *testing.T, srv *execServer) (fail func(format string, args ...any), report func()) {
	failed := false
	fail = func(format string, args ...any) {
		failed = true
		t.Errorf(format, args...)
	}
	report = func() {
		if failed || os.Getenv("CODEX_E2E_VERBOSE") != "" {
			t.Logf("codex exec stdout:\n%s\ncodex exec stderr:\n%s", r.stdout.String(), tail(r.stderr.String()))
			t.Logf("exec-server exchange (%d messages):\n%s", len(r.msgs), transcript(r.msgs, 1500))
			t.Logf("%s stderr:\n%s", srv.name, tail(srv.stderr.String()))
		}
	}
	if r.runErr != nil {
		fail("codex exec: %v", r.runErr)
	}
	if r.problems != "" {
		fail("scripted model: %s", r.problems)
	}
	return fail, report
}

// answer is the exec_command output the CLI sent back to the model; without one it
// calls fail and reports false.
func (r *managedRun) answer(fail func(format string, args ...any)) (string, bool) {
	for _, q := range r.reqs {
		if out, ok := toolOutput(q); ok {
			return out, true
		}
	}
	fail("the CLI never sent the exec_command output back to the model (%d model requests)", len(r.reqs))
	return "", false
}

func runManagedNetworkExec(t *testing.T, rel refbin.Release, srv *execServer, v netVariant) {
	marker := fmt.Sprintf("e2e-netproxy-%d", randomFactor(t)*randomFactor(t))
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, marker)
	}))
	defer site.Close()
	port := site.Listener.Addr().(interface{ String() string }).String()
	port = port[strings.LastIndexByte(port, ':')+1:]
	// The marker exists only on the server: it reaches the model only through the proxy.
	shellCmd := "curl -sS --max-time 20 " + fmt.Sprintf(v.curl, port) + `; echo; echo "proxy=${HTTP_PROXY:+set}"`
	run := runManagedCodexExec(t, rel, srv, shellCmd, v.extras)
	stdout, stderr, msgs := &run.stdout, &run.stderr, run.msgs
	fail, report := run.checker(t, srv)
	defer report()
	const rejected = "does not support executor-local network proxy launches"
	if strings.Contains(stdout.String()+stderr.String(), rejected) {
		fail("the CLI rejected the command: %q", rejected)
	}
	output, answered := run.answer(fail)
	switch {
	case !answered:
	case strings.Contains(output, rejected):
		fail("the command was rejected: %q", output)
	case !strings.Contains(output, marker) || !strings.Contains(output, "proxy=set"):
		fail("tool output sent to the model = %q, want %q fetched through the proxy", output, marker)
	}
	if srv.noiseEnv != nil { // through the relay the exchange is end-to-end encrypted: the output is the proof
		t.Logf("codex %s → %s (relay): tool output %q", rel.Version, srv.name, output)
		return
	}

	// The CLI's process/start carried a networkProxy; the server answered it without an
	// error and sent network/policyDecision records allowing localhost on the server's port.
	var startID json.RawMessage
	var start struct {
		Sandbox               json.RawMessage `json:"sandbox"`
		EnforceManagedNetwork bool            `json:"enforceManagedNetwork"`
	}
	var decisions []map[string]any
	for _, m := range msgs {
		switch {
		case m.FromClient && m.Msg.Method == "process/start" && strings.Contains(string(m.Msg.Params), "curl -sS --max-time 20"):
			startID = m.Msg.ID
			_ = json.Unmarshal(m.Msg.Params, &start)
			if !strings.Contains(string(m.Msg.Params), `"networkProxy":{`) || !strings.Contains(string(m.Msg.Params), v.param) {
				fail("process/start carries no networkProxy (with %s): %s", v.param, m.Msg.Params)
			}
		case !m.FromClient && m.Msg.Method == "network/policyDecision":
			var p map[string]any
			if json.Unmarshal(m.Msg.Params, &p) == nil {
				decisions = append(decisions, p)
			}
		}
	}
	if startID == nil {
		fail("the CLI sent no process/start for the scripted command")
		return
	}
	// With a sandbox and enforceManagedNetwork, the command reached the proxy only
	// through the managed-network bridge (spec/network-proxy.md §8.1).
	sandboxed := len(start.Sandbox) > 0 && string(start.Sandbox) != "null"
	var result struct {
		SandboxType string `json:"sandboxType"`
	}
	if resp, ok := responseTo(msgs, startID); !ok || resp.Error != nil {
		fail("process/start answer: %s (answered %v)", resp.Error, ok)
	} else if json.Unmarshal(resp.Result, &result) != nil || (sandboxed && result.SandboxType != "linuxSeccomp") {
		fail("process/start result = %s, want sandboxType linuxSeccomp for a sandboxed start", resp.Result)
	}
	allowed := false
	for _, d := range decisions {
		if d["decision"] == "allow" && d["host"] == "localhost" && fmt.Sprint(d["port"]) == port && d["protocol"] == v.protocol {
			allowed = true
		}
	}
	if !allowed {
		fail("no %s network/policyDecision allowing localhost:%s reached the CLI; got %v", v.protocol, port, decisions)
	}
	t.Logf("codex %s → %s: sandbox %v, enforceManagedNetwork %v, sandboxType %q, %d policy decisions; tool output %q",
		rel.Version, srv.name, sandboxed, start.EnforceManagedNetwork, result.SandboxType, len(decisions), output)
}
