package capdiscover_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/execlab/executor/executor/capdiscover"
	"github.com/execlab/executor/executor/fs"
	"github.com/execlab/executor/executor/protocol"
	"github.com/execlab/executor/jsonwire"
	"github.com/execlab/executor/sandbox"
	"github.com/execlab/executor/sandbox/sandboxtest"
)

// The expectations below were observed from codex 0.171.0 and 0.169.0 (the same cases
// run against the binaries in test/conformance/testdata/scenarios/discoverv2_*.json).

func TestFrontMatter_Accepted(t *testing.T) {
	for _, c := range []struct{ in, name, desc, short string }{
		{"---\nname: a1\ndescription: Build for AWS: ECS\n---\n", "a1", "Build for AWS: ECS", ""},
		{"---\nname: a2\ndescription: \"quoted  desc\"\n---\n", "a2", "quoted desc", ""},
		{"---\nname:   spaced   name  \ndescription: |\n  multi\n  line\n---\n", "spaced name", "multi line", ""},
		{"---\nname: ~\ndescription: d4\n---\n", "dir", "d4", ""},
		{"  ---  \nname: a9\ndescription: d9\n  ---\nbody", "a9", "d9", ""},
		{"---\r\nname: a10\r\ndescription: d10\r\n---\r\n", "a10", "d10", ""},
		{"---\nname: 1.50\ndescription: 0x10\n---\n", "1.50", "0x10", ""},
		{"---\nname: 5\ndescription: true\n---\n", "5", "true", ""},
		{"---\nname: \"\"\ndescription: d17\nmetadata:\n  short-description: \"  \"\n  other: 1\n---\n", "dir", "d17", ""},
		{"---\nname: &x a19\ndescription: *x\n---\n", "a19", "a19", ""},
		{"---\nname: !!str a20\ndescription: !custom d20\n---\n", "a20", "d20", ""},
		{"---\nname: a22\ndescription: d22 # comment\nextra: [unclosed\n---\n", "a22", "d22", ""},
		{"---\nname: a27\ndescription: d\nx: 1\nx: 2\n---\n", "a27", "d", ""},
		{"---\nname: eta\ndescription: d\nmetadata:\n  short-description: 7\n---\n", "eta", "d", "7"},
		{"---\nname: " + strings.Repeat("a", 64) + "\ndescription: d\n---\n", strings.Repeat("a", 64), "d", ""},
	} {
		name, desc, short, _, ok := capdiscover.FrontMatter(c.in, "dir")
		if !ok || name != c.name || desc != c.desc || short != c.short {
			t.Errorf("%q: got (%q, %q, %q, %v), want (%q, %q, %q, true)", c.in, name, desc, short, ok, c.name, c.desc, c.short)
		}
	}
}

func TestFrontMatter_Refused(t *testing.T) {
	for _, in := range []string{
		"no front matter\n",
		"---\nname: gamma\n---\n",                            // no description
		"---\nname: [a]\ndescription: d\n---\n",              // a sequence
		"---\nname: a5\ndescription: d5\nmetadata: 5\n---\n", // metadata not a mapping
		"---\nname: a6\ndescription: d6\nmetadata: ~\n---\n", // metadata null
		"---\nname: a8\ndescription: d8\nname: dup\n---\n",   // repeated known key
		"---\n---\n",                         // empty block
		"---\nname: a12\ndescription: d12\n", // not closed
		"---\nname: " + strings.Repeat("a", 65) + "\ndescription: d\n---\n", // name too long
		"---\nname: a16\ndescription: \"\"\n---\n",                          // blank description
		"---\n- a\n---\n", // not a mapping
		"\xef\xbb\xbf---\nname: a24\ndescription: d24\n---\n", // BOM before the marker
		"---\nname: a25\ndescription: null\n---\n",
		"---\nname: a\ndescription: d\nmetadata:\n  short-description: s\n  short-description: t\n---\n",
	} {
		if name, _, _, _, ok := capdiscover.FrontMatter(in, "dir"); ok {
			t.Errorf("%q: accepted as %q, want refused", in, name)
		}
	}
}

func TestSidecar(t *testing.T) {
	for _, c := range []struct{ in, policy, deps string }{
		{"not: [valid", "null", "null"},
		{"policy: {}", `{"allowImplicitInvocation":null,"products":[]}`, "null"},
		{"policy: {allow_implicit_invocation: yes}", "null", "null"},
		{"policy: {allow_implicit_invocation: True}", `{"allowImplicitInvocation":true,"products":[]}`, "null"},
		{`policy: {allow_implicit_invocation: "true"}`, "null", "null"},
		{"policy: {products: [CODEX, atlas, chatgpt]}", `{"allowImplicitInvocation":null,"products":["codex","atlas","chatgpt"]}`, "null"},
		{"policy: {products: [Codex]}", "null", "null"},
		{"policy: {products: ~}", "null", "null"},
		{"dependencies: {tools: []}", "null", "null"},
		{"dependencies: {tools: [{type: mcp}]}", "null", "null"},
		{"dependencies: {tools: [{type: t, value: v, oauth_callback_port: 70000}]}", "null",
			`{"tools":[{"type":"t","value":"v","description":null,"transport":null,"command":null,"url":null,"oauthCallbackPort":null}]}`},
		{`dependencies: {tools: [{type: "  t  x ", value: v, url: "", description: 1.5}], extra: 1}`, "null",
			`{"tools":[{"type":"t x","value":"v","description":"1.5","transport":null,"command":null,"url":null,"oauthCallbackPort":null}]}`},
		{"dependencies: {tools: [{type: t, value: v}, 5]}", "null", "null"},
		{"dependencies: {tools: [{type: t, value: v, type: u}]}", "null", "null"},
		{"policy: {allow_implicit_invocation: false}\ninterface: 5", "null", "null"},
	} {
		pol, deps := capdiscover.Sidecar(c.in)
		gotP, _ := json.Marshal(pol)
		gotD, _ := json.Marshal(deps)
		if string(gotP) != c.policy || string(gotD) != c.deps {
			t.Errorf("%q: got policy %s deps %s, want %s %s", c.in, gotP, gotD, c.policy, c.deps)
		}
	}
}

func TestActiveVersion(t *testing.T) {
	for _, c := range []struct {
		names []string
		want  string
	}{
		{[]string{"1.0.0", "2.0.0", "10.0.0", "9.0.0"}, "10.0.0"},
		{[]string{"2.0.0", "10.0.0-beta"}, "10.0.0-beta"},
		{[]string{"1.0.0", "1.0.0+b"}, "1.0.0+b"},
		{[]string{"9", "10"}, "9"},
		{[]string{"1.0.0", "a", "b"}, "b"},
		{[]string{"0.5.0", "v1"}, "v1"},
		{[]string{"1.0.0", "local", "9.0.0"}, "local"},
		{[]string{"1.0.0-rc.1", "1.0.0-rc.10", "1.0.0-rc.2", "1.0.0"}, "1.0.0"},
		{[]string{"1.0.0-alpha", "1.0.0-alpha.1", "1.0.0-beta"}, "1.0.0-beta"},
	} {
		if got, ok := capdiscover.ActiveVersion(c.names); !ok || got != c.want {
			t.Errorf("%v: got %q, want %q", c.names, got, c.want)
		}
	}
	if _, ok := capdiscover.ActiveVersion(nil); ok {
		t.Error("no versions: got one")
	}
}

func TestPluginManifest(t *testing.T) {
	for _, c := range []struct {
		in, display string
		ok          bool
	}{
		{`{"name":"plug","interface":{"displayName":"Plug Two"}}`, "Plug Two", true},
		{`{"name":"  sp ","interface":{"displayName":"  D  N "}}`, "D  N", true},
		{`{"version":"1"}`, "1.0.0", true},
		{`{"name":"","interface":{"displayName":""}}`, "1.0.0", true},
		{`{"name":"a","interface":{"displayName":null,"x":1},"version":5}`, "a", true},
		{`not json`, "", false},
		{`[]`, "", false},
		{`{"name":5}`, "", false},
		{`{"name":null}`, "", false},
		{`{"name":"a","interface":5}`, "", false},
		{`{"name":"a","interface":{"displayName":5}}`, "", false},
		{`{"name":"a","name":"b"}`, "", false},
		{`{"name":"b2"} trailing`, "", false},
	} {
		_, display, ok := capdiscover.PluginManifest(c.in, "/x/1.0.0")
		if ok != c.ok || ok && display != c.display {
			t.Errorf("%s: got (%q, %v), want (%q, %v)", c.in, display, ok, c.display, c.ok)
		}
	}
}

// writeTree lays files (relative path → contents) under root.
func writeTree(t testing.TB, root string, files map[string]string) {
	t.Helper()
	for rel, contents := range files {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(contents), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestDiscoverV2_Locations(t *testing.T) {
	root := t.TempDir()
	ch, home := filepath.Join(root, "ch"), filepath.Join(root, "home")
	writeTree(t, root, map[string]string{
		"ch/skills/a/SKILL.md":                                 "---\nname: alpha\ndescription: A\nmetadata:\n  short-description: s\n---\n",
		"ch/skills/a/agents/openai.yaml":                       "policy: {allow_implicit_invocation: false}",
		"ch/skills/bad/SKILL.md":                               "no front matter",
		"home/.agents/skills/u/SKILL.md":                       "---\ndescription: user\n---\n",
		"ch/plugins/cache/m/p/1.0.0/.codex-plugin/plugin.json": `{"name":"old"}`,
		"ch/plugins/cache/m/p/2.0.0/.codex-plugin/plugin.json": `{"name":"pl"}`,
		"ch/plugins/cache/m/p/2.0.0/.mcp.json":                 `{}`,
		"ch/plugins/cache/m/p/2.0.0/skills/s/SKILL.md":         "---\nname: s\ndescription: d\n---\n",
		"ch/plugins/cache/m/q/1.0.0/x":                         "no manifest",
	})
	res, err := capdiscover.New(fs.New(nil)).DiscoverV2(context.Background(), &protocol.DiscoverV2Params{Cwd: "file:///"},
		capdiscover.Homes{CodexHome: ch, Home: home})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range res.Skills {
		names = append(names, s.Name+"@"+s.DiscoveryRoot.ID)
	}
	if got, want := strings.Join(names, ","), "alpha@codex-home-skills,u@user-agent-skills"; got != want {
		t.Errorf("skills: got %s, want %s", got, want)
	}
	if len(res.Plugins) != 1 || res.Plugins[0].ID != "p@m" || res.Plugins[0].Version != "2.0.0" ||
		res.Plugins[0].Files.MCPConfig == nil || len(res.Plugins[0].Skills) != 1 || res.Plugins[0].Skills[0].Name != "pl:s" {
		t.Errorf("plugins: got %+v", res.Plugins)
	}
	// One warning for codex-home (the bad skill), one for plugin q (no manifest).
	if len(res.Warnings) != 2 || res.Warnings[0] != "some capability metadata could not be loaded; discovery may be incomplete" {
		t.Errorf("warnings: got %q", res.Warnings)
	}
	if p := res.Skills[0].Policy; p == nil || p.AllowImplicitInvocation == nil || *p.AllowImplicitInvocation {
		t.Errorf("policy: got %+v", p)
	}
}

func TestDiscoverV2_NothingToFind(t *testing.T) {
	res, err := capdiscover.New(fs.New(nil)).DiscoverV2(context.Background(), &protocol.DiscoverV2Params{Cwd: "file:///"},
		capdiscover.Homes{CodexHome: filepath.Join(t.TempDir(), "missing"), Home: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(res)
	if string(b) != `{"plugins":[],"skills":[],"warnings":[]}` {
		t.Errorf("got %s", b)
	}
}

func TestDiscoverV2Params_Errors(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`null`, "invalid type: null, expected struct DiscoverV2CapabilitiesRequest"},
		{`{}`, "missing field `cwd`"},
		{`[]`, "invalid length 0, expected struct DiscoverV2CapabilitiesRequest with 2 elements"},
		{`["file:///tmp",null,3]`, "invalid length 3, expected fewer elements in array"},
		{`{"cwd":"/tmp"}`, "invalid URI: relative URL without a base"},
		{`{"cwd":5}`, "invalid type: number, expected a string"},
		{`{"cwd":"file:///tmp","sandbox":{}}`, "missing field `permissions`"},
		{`{"cwd":"file:///tmp","sandbox":5}`, "invalid type: number, expected struct FileSystemSandboxContext"},
		{`{"cwd":"file:///tmp","sandbox":[]}`, "invalid length 0, expected struct FileSystemSandboxContext with 9 elements"},
		{`{"cwd":"file:///tmp","sandbox":{"permissions":null}}`, "invalid type: null, expected internally tagged enum ExecPermissionProfile"},
		{`{"cwd":"file:///tmp","sandbox":{"permissions":{"type":"disabled"}}}`, "missing field `cwd`"},
		{`{"cwd":"file:///tmp","sandbox":{"permissions":{"type":"disabled"},"cwd":"file:///tmp"}}`, "missing field `windowsSandboxLevel`"},
	} {
		var p protocol.DiscoverV2Params
		err := jsonwire.UnmarshalParams([]byte(c.in), &p)
		e, ok := err.(*jsonwire.Error)
		if !ok || e.Code != jsonwire.CodeInvalidParams || e.Message != c.want {
			t.Errorf("%s: got %v, want -32602 %q", c.in, err, c.want)
		}
	}
	for _, in := range []string{`["file:///tmp"]`, `{"cwd":"file:///C:/x","sandbox":null,"x":1}`} {
		var p protocol.DiscoverV2Params
		if err := jsonwire.UnmarshalParams([]byte(in), &p); err != nil {
			t.Errorf("%s: %v", in, err)
		}
	}
}

// BenchmarkDiscoverV2 scans 200 codex-home skills (each with an openai.yaml) and 20
// installed plugins of two versions and five skills each, uncached, as every call does.
func BenchmarkDiscoverV2(b *testing.B) {
	root := b.TempDir()
	files := map[string]string{}
	for i := range 200 {
		d := "ch/skills/s" + strconv.Itoa(i)
		files[d+"/SKILL.md"] = "---\nname: s" + strconv.Itoa(i) + "\ndescription: skill\n---\nbody\n"
		files[d+"/agents/openai.yaml"] = "policy: {allow_implicit_invocation: true}"
	}
	for p := range 20 {
		for _, v := range []string{"1.0.0", "2.0.0"} {
			d := "ch/plugins/cache/m/p" + strconv.Itoa(p) + "/" + v
			files[d+"/.codex-plugin/plugin.json"] = `{"name":"p` + strconv.Itoa(p) + `"}`
			for s := range 5 {
				files[d+"/skills/k"+strconv.Itoa(s)+"/SKILL.md"] = "---\ndescription: d\n---\n"
			}
		}
	}
	writeTree(b, root, files)
	svc := capdiscover.New(fs.New(nil))
	h := capdiscover.Homes{CodexHome: filepath.Join(root, "ch"), Home: filepath.Join(root, "home")}
	b.ResetTimer()
	for b.Loop() {
		res, err := svc.DiscoverV2(context.Background(), &protocol.DiscoverV2Params{Cwd: "file:///"}, h)
		if err != nil || len(res.Skills) != 200 || len(res.Plugins) != 20 {
			b.Fatalf("got %d skills, %d plugins, %v", len(res.Skills), len(res.Plugins), err)
		}
	}
}

// TestDiscoverV2_Sandboxed scans the locations in the bubblewrap helper: a denied skill
// directory is dropped with one warning; an empty policy hides every location, which
// then contributes nothing and no warning; mxc with a restricting policy fails (-32603).
func TestDiscoverV2_Sandboxed(t *testing.T) {
	l := sandboxtest.Launcher(t, sandbox.BackendBubblewrap)
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"home/.agents/skills/a/SKILL.md": "---\ndescription: a\n---\n",
		"home/.agents/skills/b/SKILL.md": "---\ndescription: b\n---\n",
	})
	u := string(protocol.FromNative(dir))
	sb := func(level, entries string) *protocol.DiscoverSandbox {
		var c protocol.DiscoverSandbox
		js := `{"permissions":{"type":"managed","network":"restricted","file_system":{"type":"restricted","entries":[` + entries +
			`]}},"cwd":"` + u + `","windowsSandboxLevel":"` + level + `"}`
		if err := json.Unmarshal([]byte(js), &c); err != nil {
			t.Fatal(err)
		}
		return &c
	}
	minimal := `{"path":{"type":"special","value":{"kind":"minimal"}},"access":"read"}`
	readDeny := minimal + `,{"path":{"type":"path","path":"` + u + `"},"access":"read"},{"path":{"type":"path","path":"` + u + `/home/.agents/skills/b"},"access":"none"}`
	svc := capdiscover.New(fs.New(&fs.Options{Sandbox: l}))
	h := capdiscover.Homes{Home: filepath.Join(dir, "home")}
	call := func(s *protocol.DiscoverSandbox) (*protocol.DiscoverV2Result, error) {
		return svc.DiscoverV2(context.Background(), &protocol.DiscoverV2Params{Cwd: protocol.PathURI(u), Sandbox: s}, h)
	}
	res, err := call(sb("disabled", readDeny))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Skills) != 1 || res.Skills[0].Name != "a" || len(res.Warnings) != 1 {
		t.Errorf("deny: got %+v", res)
	}
	res, err = call(sb("disabled", ""))
	if b, _ := json.Marshal(res); err != nil || string(b) != `{"plugins":[],"skills":[],"warnings":[]}` {
		t.Errorf("empty policy: got %s, %v", b, err)
	}
	_, err = call(sb("mxc", readDeny))
	if e, ok := err.(*jsonwire.Error); !ok || e.Code != jsonwire.CodeInternal ||
		e.Message != "failed to prepare fs sandbox: failed to prepare MXC sandbox: native MXC is unavailable on this executor" {
		t.Errorf("mxc: got %v", err)
	}
}
