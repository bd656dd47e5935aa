package capdiscover_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/execlab/executor/executor/capdiscover"
	"github.com/execlab/executor/executor/fs"
	"github.com/execlab/executor/executor/protocol"
	"github.com/execlab/executor/jsonwire"
	"github.com/execlab/executor/sandbox"
	"github.com/execlab/executor/sandbox/sandboxtest"
)

// tree writes files (relative path → contents) under a new temporary directory.
func tree(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for rel, c := range files {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func discover(t *testing.T, s *capdiscover.Service, roots ...protocol.CapabilityRootRequest) []protocol.CapabilityRootDiscovery {
	t.Helper()
	res, err := s.Discover(context.Background(), &protocol.CapabilityRootsDiscoverParams{Roots: roots})
	if err != nil {
		t.Fatalf("Discover: %v", err)
	}
	if len(res.Roots) != len(roots) {
		t.Fatalf("got %d roots, want %d", len(res.Roots), len(roots))
	}
	return res.Roots
}

func skillPaths(r protocol.CapabilityRootDiscovery) []string {
	var out []string
	for _, s := range r.Skills {
		out = append(out, string(s.Instructions.Path))
	}
	return out
}

func TestDiscover_PluginAndSkills(t *testing.T) {
	dir := tree(t, map[string]string{
		"p/.codex-plugin/plugin.json":    `{"mcpServers":"./m.json","apps":"../x"}`,
		"p/.claude-plugin/plugin.json":   `{}`,
		"p/m.json":                       `{"mcpServers":{}}`,
		"p/skills/b/SKILL.md":            "b",
		"p/skills/a/SKILL.md":            "---\nname: a\n---\n",
		"p/skills/a/agents/openai.yaml":  "x: 1\n",
		"p/n/.cursor-plugin/plugin.json": "nested",
	})
	root := protocol.FromNative(filepath.Join(dir, "p"))
	got := discover(t, capdiscover.New(fs.New(nil)), protocol.CapabilityRootRequest{ID: "r", Path: root})[0]
	if got.Error != nil {
		t.Fatalf("error %q", *got.Error)
	}
	if got.Plugin == nil || got.Plugin.Manifest.Path != root+"/.codex-plugin/plugin.json" ||
		got.Plugin.MCPConfig == nil || got.Plugin.MCPConfig.Contents != `{"mcpServers":{}}` || got.Plugin.AppsConfig != nil {
		t.Errorf("plugin = %+v", got.Plugin)
	}
	want := []string{string(root) + "/skills/a/SKILL.md", string(root) + "/skills/b/SKILL.md"}
	if g := skillPaths(got); strings.Join(g, ",") != strings.Join(want, ",") {
		t.Errorf("skills = %v, want %v", g, want)
	}
	if got.Skills[0].Metadata == nil || got.Skills[1].Metadata != nil {
		t.Errorf("metadata: got %+v / %+v, want a's only", got.Skills[0].Metadata, got.Skills[1].Metadata)
	}
	if len(got.NamespaceManifests) != 2 || got.NamespaceManifests[1].Contents != "nested" {
		t.Errorf("namespaceManifests = %+v", got.NamespaceManifests)
	}
	wantWarn := "ignoring apps in " + string(root) + "/.codex-plugin/plugin.json: path must start with `./`"
	if len(got.Warnings) != 1 || got.Warnings[0] != wantWarn {
		t.Errorf("warnings = %q, want [%q]", got.Warnings, wantWarn)
	}
}

func TestDiscover_RootErrorsAndLimit(t *testing.T) {
	dir := tree(t, map[string]string{"f": "x"})
	s := capdiscover.New(fs.New(nil))
	got := discover(t, s,
		protocol.CapabilityRootRequest{ID: "m", Path: protocol.FromNative(filepath.Join(dir, "nope"))},
		protocol.CapabilityRootRequest{ID: "f", Path: protocol.FromNative(filepath.Join(dir, "f"))},
		protocol.CapabilityRootRequest{ID: "c", Path: "file:///C:/x"},
	)
	wants := []string{
		"failed to inspect capability root " + string(protocol.FromNative(filepath.Join(dir, "nope"))) + ": No such file or directory (os error 2)",
		"capability root " + string(protocol.FromNative(filepath.Join(dir, "f"))) + " is not a directory",
		"failed to inspect capability root file:///C:/x: 'file:///C:/x' is invalid on 'linux'",
	}
	for i, w := range wants {
		if got[i].Error == nil || *got[i].Error != w {
			t.Errorf("root %d: error %v, want %q", i, got[i].Error, w)
		}
		if got[i].Skills == nil || got[i].Warnings == nil || got[i].NamespaceManifests == nil {
			t.Errorf("root %d: nil slices would encode as null", i)
		}
	}
	roots := make([]protocol.CapabilityRootRequest, capdiscover.MaxRoots+1)
	_, err := s.Discover(context.Background(), &protocol.CapabilityRootsDiscoverParams{Roots: roots})
	var rpc *jsonwire.Error
	if !errors.As(err, &rpc) || rpc.Code != jsonwire.CodeInvalidRequest || rpc.Message != "capability root discovery accepts at most 128 roots" {
		t.Errorf("129 roots: got %v", err)
	}
}

func TestDiscover_Budgets(t *testing.T) {
	big := strings.Repeat("x", capdiscover.MaxFileBytes)
	files := map[string]string{"over/SKILL.md": big + "x"}
	for i := range 17 {
		files[filepath.Join("s", string(rune('a'+i)), "SKILL.md")] = big
	}
	dir := tree(t, files)
	got := discover(t, capdiscover.New(fs.New(nil)), protocol.CapabilityRootRequest{ID: "r", Path: protocol.FromNative(dir)})[0]
	if len(got.Skills) != 16 {
		t.Errorf("got %d skills, want 16", len(got.Skills))
	}
	want := []string{
		"capability file " + string(protocol.FromNative(dir)) + "/over/SKILL.md exceeds the 1048576-byte limit",
		"capability root bundle exceeds the 16777216-byte limit",
	}
	if strings.Join(got.Warnings, "\n") != strings.Join(want, "\n") {
		t.Errorf("warnings = %q, want %q", got.Warnings, want)
	}
}

func TestRelativePath(t *testing.T) {
	tests := []struct{ in, rel, problem string }{
		{"./m.json", "m.json", ""},
		{"./a/b.json", "a/b.json", ""},
		{"m.json", "", "path must start with `./`"},
		{"../m.json", "", "path must start with `./`"},
		{"./", "", "path must remain below the capability root"},
		{"./a/../b", "", "path must remain below the capability root"},
		{`./a\..\b`, "", "path must remain below the capability root"},
		{".//etc/passwd", "", "path must remain below the capability root"},
	}
	for _, tt := range tests {
		rel, problem := capdiscover.RelativePath(tt.in)
		if rel != tt.rel || problem != tt.problem {
			t.Errorf("%q: got %q %q, want %q %q", tt.in, rel, problem, tt.rel, tt.problem)
		}
	}
}

// TestDiscover_Sandboxed runs a root scan in the bubblewrap helper: a denied directory
// is a walk warning and its skill is absent; an empty policy hides the root.
func TestDiscover_Sandboxed(t *testing.T) {
	l := sandboxtest.Launcher(t, sandbox.BackendBubblewrap)
	dir := tree(t, map[string]string{"skills/a/SKILL.md": "a", "skills/b/SKILL.md": "b"})
	u := string(protocol.FromNative(dir))
	ctxJSON := func(entries string) *protocol.CapabilitySandbox {
		var c protocol.CapabilitySandbox
		js := `{"permissions":{"type":"managed","network":"restricted","file_system":{"type":"restricted","entries":[` + entries +
			`]}},"cwd":"` + u + `","windowsSandboxLevel":"disabled"}`
		if err := json.Unmarshal([]byte(js), &c); err != nil {
			t.Fatal(err)
		}
		return &c
	}
	minimal := `{"path":{"type":"special","value":{"kind":"minimal"}},"access":"read"}`
	deny := ctxJSON(minimal + `,{"path":{"type":"path","path":"` + u + `"},"access":"read"},{"path":{"type":"path","path":"` + u + `/skills/b"},"access":"none"}`)
	got := discover(t, capdiscover.New(fs.New(&fs.Options{Sandbox: l})),
		protocol.CapabilityRootRequest{ID: "deny", Path: protocol.PathURI(u), Sandbox: deny},
		protocol.CapabilityRootRequest{ID: "empty", Path: protocol.PathURI(u), Sandbox: ctxJSON("")},
	)
	if g := skillPaths(got[0]); len(g) != 1 || g[0] != u+"/skills/a/SKILL.md" {
		t.Errorf("deny: skills = %v, want only a", g)
	}
	wantWarn := "failed to scan capability path " + u + "/skills/b: Permission denied (os error 13)"
	if len(got[0].Warnings) != 1 || got[0].Warnings[0] != wantWarn {
		t.Errorf("deny: warnings = %q, want [%q]", got[0].Warnings, wantWarn)
	}
	wantErr := "failed to inspect capability root " + u + ": No such file or directory (os error 2)"
	if got[1].Error == nil || *got[1].Error != wantErr {
		t.Errorf("empty: error = %v, want %q", got[1].Error, wantErr)
	}
}
