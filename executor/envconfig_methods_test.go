package executor_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/execlab/executor/executor"
)

// environmentConfig/read is routed, advertised, and reads Options.CodexHome.
func TestServer_EnvironmentConfigRead(t *testing.T) {
	home := t.TempDir()
	if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte("model = \"m\"\n[mcp_servers.docs]\nurl = \"https://docs.example/mcp\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, &executor.Options{CodexHome: home})
	c := h.dial()
	init := c.Handshake("")
	caps := initCaps(init)
	if caps["environmentConfigRead"] != true {
		t.Fatalf("capabilities %v: environmentConfigRead is not true", caps)
	}

	resp, _ := c.Call(1, "environmentConfig/read", map[string]any{
		"cwd": "file:///", "configPaths": [][]string{{"mcp_servers"}}, "requirementsPaths": [][]string{{"mcp_servers"}}})
	res, _ := resp["result"].(map[string]any)
	layers, _ := res["config"].(map[string]any)["layers"].([]any)
	if len(layers) != 1 {
		t.Fatalf("got %v, want one user layer", resp)
	}
	l := layers[0].(map[string]any)
	if want := "[mcp_servers.docs]\nurl = \"https://docs.example/mcp\"\n"; l["toml"] != want || l["source"] != "user ("+filepath.Join(home, "config.toml")+")" {
		t.Errorf("layer %v, want the user file's mcp_servers", l)
	}

	resp, _ = c.Call(2, "environmentConfig/read", nil)
	if code, msg := errMessage(resp); code != -32602 || msg != "invalid type: null, expected struct EnvironmentConfigReadParams" {
		t.Errorf("null params: %v %q", code, msg)
	}
}
