package e2e_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/execlab/executor/internal/refbin"
)

// TestCodexCLI_SeesEnvironmentMCPAndSkill (issue 28): the executor's environment (its
// CODEX_HOME, not the CLI's) configures a streamable-HTTP MCP server, and the workspace has
// a repository skill; per release, the release's CLI must see both through `executor serve`
// exactly as through the release's `codex exec-server`. What the 0.171.0 CLI does, as
// recorded against the reference:
//
//   - environmentConfig/read {configPaths:[["mcp_servers"]]} returns the executor's user
//     config layer with [mcp_servers.e2eenv]; the CLI then talks MCP to the server's url
//     through the executor (http/request with streamResponse, bodies arriving as
//     http/request/bodyDelta): initialize, notifications/initialized, tools/list; the
//     model is offered the server's tool (namespace mcp__e2eenv).
//   - The repository skill (<work>/.agents/skills/<name>/SKILL.md) is found with
//     fs/getMetadata, fs/canonicalize, fs/walk and fs/readFile, and listed to the model.
//     `codex exec` sends no capabilityRoots/discoverV1 (that is for roots an app-server
//     client selects) and no capabilities/discoverV2 although the reference advertises
//     capabilityDiscoveryV2, so skills in the executor's $CODEX_HOME/skills and
//     $HOME/.agents/skills reach the model from neither server; the test puts skills there
//     too and requires the same visibility for each skill through both.
//
// The recordings are also compared as in TestCodexCLI_SameMethodsAsReference.
func TestCodexCLI_SeesEnvironmentMCPAndSkill(t *testing.T) {
	startCodexCLITest(t)
	refbin.ForEachRelease(t, func(t *testing.T, rel refbin.Release) {
		const server, tool = "e2eenv", "e2e_env_probe"
		skills := []string{"e2e-repo-skill", "e2e-codexhome-skill", "e2e-home-skill"}
		mcp := newMCPHTTPServer(t, tool) // one for both runs: the same URL in both configs
		var marks []int                  // where each run's MCP traffic starts
		ref, ours := runParity(t, rel, "echo e2e-parity", func(env executorEnv) {
			marks = append(marks, len(mcp.Methods()))
			writeFile(t, filepath.Join(env.codexHome, "config.toml"), fmt.Sprintf("[mcp_servers.%s]\nurl = %q\n", server, mcp.URL()))
			writeFile(t, filepath.Join(env.codexHome, "skills", skills[1], "SKILL.md"), skillMD(skills[1]))
			writeFile(t, filepath.Join(env.home, ".agents", "skills", skills[2], "SKILL.md"), skillMD(skills[2]))
		}, func(work string) {
			writeFile(t, filepath.Join(work, ".agents", "skills", skills[0], "SKILL.md"), skillMD(skills[0]))
		})
		all := mcp.Methods()
		mcpMethods := [][]string{all[marks[0]:marks[1]], all[marks[1]:]}
		var sawSkill [2]map[string]bool
		for i, s := range []paritySession{ref, ours} {
			// The executor's config named the server.
			var cfg struct {
				Config struct {
					Layers []struct {
						TOML string `json:"toml"`
					} `json:"layers"`
				} `json:"config"`
			}
			var readOK, httpOK bool
			for _, c := range s.calls() {
				switch {
				case c.Method == "environmentConfig/read" && !c.failed() && c.Answered:
					if json.Unmarshal(c.Result, &cfg) == nil && len(cfg.Config.Layers) > 0 &&
						strings.Contains(cfg.Config.Layers[0].TOML, "[mcp_servers."+server+"]") &&
						strings.Contains(cfg.Config.Layers[0].TOML, mcp.URL()) {
						readOK = true
					}
				case c.Method == "http/request" && !c.failed() && c.Answered &&
					strings.Contains(callKey(c, nil), "rpc=tools/list") && strings.Contains(callKey(c, nil), mcp.URL()):
					httpOK = true
				}
			}
			if !readOK {
				t.Errorf("%s: no environmentConfig/read answered with the executor's [mcp_servers.%s] (url %s)", s.server, server, mcp.URL())
			}
			if !httpOK {
				t.Errorf("%s: the CLI sent no tools/list to the MCP server through http/request", s.server)
			}
			if !slices.Contains(mcpMethods[i], "initialize") || !slices.Contains(mcpMethods[i], "tools/list") {
				t.Errorf("%s: the MCP server received %v, want initialize and tools/list", s.server, mcpMethods[i])
			}
			// The model was offered the tool and told of the skills.
			if len(s.requests) == 0 {
				t.Errorf("%s: the model received no request", s.server)
				continue
			}
			first := s.requests[0]
			if !first.offers("mcp__"+server) || !bytes.Contains(first.Raw, []byte(tool)) {
				t.Errorf("%s: the first model request offers tools %v and mentions %s: %v; want mcp__%s with %s",
					s.server, first.toolNames(), tool, bytes.Contains(first.Raw, []byte(tool)), server, tool)
			}
			sawSkill[i] = map[string]bool{}
			for _, name := range skills {
				sawSkill[i][name] = bytes.Contains(first.Raw, []byte(name))
			}
			if !sawSkill[i][skills[0]] {
				t.Errorf("%s: the first model request does not list the repository skill %s", s.server, skills[0])
			}
		}
		// The executor's config reached the CLI in the same form from both servers.
		if r, o := configReadResult(ref), configReadResult(ours); r != o {
			t.Errorf("environmentConfig/read results differ after normalization:\nreference %s\nours      %s", r, o)
		}
		for _, name := range skills {
			if sawSkill[0] != nil && sawSkill[1] != nil && sawSkill[0][name] != sawSkill[1][name] {
				t.Errorf("skill %s reaches the model through the reference: %v, through ours: %v", name, sawSkill[0][name], sawSkill[1][name])
			}
		}
		if os.Getenv("CODEX_E2E_VERBOSE") != "" {
			t.Logf("MCP methods: reference %v, ours %v; skills seen: reference %v, ours %v", mcpMethods[0], mcpMethods[1], sawSkill[0], sawSkill[1])
		}
	})
}

// configReadResult is the result of the session's first environmentConfig/read, with its
// directories replaced by placeholders and re-encoded with sorted keys ("" if none).
func configReadResult(s paritySession) string {
	for _, c := range s.calls() {
		if c.Method == "environmentConfig/read" && c.Answered && !c.failed() {
			var v any
			if json.Unmarshal([]byte(s.names.apply(string(c.Result))), &v) != nil {
				return "not JSON: " + string(c.Result)
			}
			b, _ := json.Marshal(v) // maps marshal with sorted keys
			return string(b)
		}
	}
	return ""
}

// writeFile writes contents to path, creating its directory.
func writeFile(t *testing.T, path, contents string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(contents), 0o644); err != nil {
		t.Fatal(err)
	}
}

// skillMD is a minimal SKILL.md: YAML front matter with name and description.
func skillMD(name string) string {
	return "---\nname: " + name + "\ndescription: Use " + name + " when the e2e script asks for it.\n---\n\n# " + name + "\n\nDo what the script says.\n"
}

// mcpHTTPServer is a minimal streamable-HTTP MCP server (JSON responses only, no SSE
// stream, no sessions) on 127.0.0.1 offering one tool. It stands for an MCP server that
// lives with the executor: the CLI learns of it from the executor's config
// (environmentConfig/read) and reaches it through the executor (http/request). It records
// the JSON-RPC methods it received.
type mcpHTTPServer struct {
	srv  *httptest.Server
	tool string

	mu      sync.Mutex // guards methods: handlers run on server goroutines
	methods []string
}

func newMCPHTTPServer(t *testing.T, tool string) *mcpHTTPServer {
	t.Helper()
	m := &mcpHTTPServer{tool: tool}
	m.srv = httptest.NewServer(http.HandlerFunc(m.serve))
	t.Cleanup(m.srv.Close)
	return m
}

// URL is the server's endpoint, for [mcp_servers.<name>] url.
func (m *mcpHTTPServer) URL() string { return m.srv.URL + "/mcp" }

// Methods returns the JSON-RPC methods received so far, in order.
func (m *mcpHTTPServer) Methods() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.methods...)
}

func (m *mcpHTTPServer) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/mcp" {
		// No server-initiated SSE stream (GET) and no sessions (DELETE): 405, as the
		// streamable-HTTP transport allows.
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		http.Error(w, "reading body", http.StatusBadRequest)
		return
	}
	var req struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			ProtocolVersion string `json:"protocolVersion"`
		} `json:"params"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		http.Error(w, "bad json", http.StatusBadRequest)
		return
	}
	m.mu.Lock()
	m.methods = append(m.methods, req.Method)
	m.mu.Unlock()
	if len(req.ID) == 0 || string(req.ID) == "null" { // a notification
		w.WriteHeader(http.StatusAccepted)
		return
	}
	resp := map[string]any{"jsonrpc": "2.0", "id": req.ID}
	switch req.Method {
	case "initialize":
		v := req.Params.ProtocolVersion
		if v == "" {
			v = "2025-03-26"
		}
		resp["result"] = map[string]any{"protocolVersion": v, "capabilities": map[string]any{"tools": map[string]any{}},
			"serverInfo": map[string]any{"name": "e2e-env-mcp", "version": "1.0.0"}}
	case "tools/list":
		resp["result"] = map[string]any{"tools": []any{map[string]any{"name": m.tool,
			"description": "Answers with a fixed text (e2e environment MCP server).",
			"inputSchema": map[string]any{"type": "object", "properties": map[string]any{}}}}}
	case "ping":
		resp["result"] = map[string]any{}
	default:
		resp["error"] = map[string]any{"code": -32601, "message": "method not found: " + req.Method}
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(resp)
}
