package e2e_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
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
	startCodexCLITest(t)
	ours := startOurExecServer(t)
	refbin.ForEachRelease(t, func(t *testing.T, rel refbin.Release) {
		reference := startReferenceExecServer(t, rel)
		t.Run("ours", func(t *testing.T) { runManagedNetworkExec(t, rel, ours, proxiedCurl) })
		t.Run("reference", func(t *testing.T) { runManagedNetworkExec(t, rel, reference, proxiedCurl) })
	})
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
	config   string // the config.toml addition
	curl     string // the command's curl options and URL, %s = the server's port
	protocol string // the network/policyDecision protocol that allows localhost
	param    string // what process/start's networkProxy must carry besides "proxy"
}

var (
	// proxiedCurl goes through the proxy variables (HTTP proxy).
	proxiedCurl = netVariant{config: managedNetworkConfig, curl: "http://localhost:%s/", protocol: "http"}
	// transparentCurl ignores them and is captured (transparent TCP, SOCKS5 policy).
	transparentCurl = netVariant{
		config: strings.Replace(managedNetworkConfig, `mode = "full"`, "mode = \"full\"\nenable_socks5 = true\ntransparent_tcp = true", 1),
		curl:   "--noproxy '*' http://localhost.:%s/", protocol: "socks5_tcp", param: `"transparentTcp":true`}
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

func runManagedNetworkExec(t *testing.T, rel refbin.Release, srv *execServer, v netVariant) {
	h := newCLIHome(t)
	codexHome, work := h.codexHome, h.work
	marker := fmt.Sprintf("e2e-netproxy-%d", randomFactor(t)*randomFactor(t))
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, marker)
	}))
	defer site.Close()
	port := site.Listener.Addr().(interface{ String() string }).String()
	port = port[strings.LastIndexByte(port, ':')+1:]
	// The marker exists only on the server: it reaches the model only through the proxy.
	shellCmd := "curl -sS --max-time 20 " + fmt.Sprintf(v.curl, port) + `; echo; echo "proxy=${HTTP_PROXY:+set}"`
	finalText := fmt.Sprintf("e2e-final-%d", randomFactor(t))
	model := newScriptedModel(t, shellCmd, finalText)
	tap := startWSTap(t, srv.url)

	writeScriptedModelConfig(t, codexHome, model, v.config)
	env := h.env("CODEX_EXEC_SERVER_URL=" + tap.URL())
	stdout, stderr, runErr := runCodexCLI(rel, work, env, 60*time.Second, "--skip-git-repo-check", "--ephemeral", "--color", "never",
		"-c", `default_permissions="dev"`, "-c", `approval_policy="never"`, "-C", work,
		"Run the command the script asks for.")

	reqs, problems := model.snapshot()
	msgs := tap.exchange()
	run := &cliRun{t: t, srv: srv, stdout: stdout, stderr: stderr, msgs: msgs, maxMsg: 1500}
	fail := run.fail
	defer run.logIfFailed()
	run.checkRan(runErr, problems)
	const rejected = "does not support executor-local network proxy launches"
	if strings.Contains(stdout+stderr, rejected) {
		fail("the CLI rejected the command: %q", rejected)
	}
	output, answered := firstToolOutput(reqs)
	switch {
	case !answered:
		fail("the CLI never sent the exec_command output back to the model (%d model requests)", len(reqs))
	case strings.Contains(output, rejected):
		fail("the command was rejected: %q", output)
	case !strings.Contains(output, marker) || !strings.Contains(output, "proxy=set"):
		fail("tool output sent to the model = %q, want %q fetched through the proxy", output, marker)
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
