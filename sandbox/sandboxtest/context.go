package sandboxtest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/execlab/executor/internal/pathuri"
	"github.com/execlab/executor/sandbox/policy"
)

// Context decodes a sandbox context (process/start's and fs/*'s sandbox member) from its
// JSON form; a decoding error fails t.
func Context(t testing.TB, js string) *policy.Context {
	t.Helper()
	var c policy.Context
	if err := json.Unmarshal([]byte(js), &c); err != nil {
		t.Fatalf("decoding sandbox context %s: %v", js, err)
	}
	return &c
}

// WorkspaceWrite is the workspace-write profile: the root readable, ws (a native absolute
// path: the cwd and only workspace root) writable, the network restricted.
func WorkspaceWrite(t testing.TB, ws string) *policy.Context {
	t.Helper()
	u := string(pathuri.FromNative(ws))
	return Context(t, `{"permissions":{"type":"managed","network":"restricted","file_system":{"type":"restricted","entries":[
		{"path":{"type":"special","value":{"kind":"root"}},"access":"read"},
		{"path":{"type":"special","value":{"kind":"project_roots"}},"access":"write"}]}},
		"cwd":"`+u+`","workspaceRoots":["`+u+`"],"windowsSandboxLevel":"disabled"}`)
}

// NestedRoots makes the issue 26 layout: a (writable in the profiles below), the project
// a/x/proj inside it, and out outside every writable root; all canonical (symlinks
// resolved) temporary directories of t.
func NestedRoots(t testing.TB) (a, proj, out string) {
	t.Helper()
	canon := func(p string) string {
		c, err := filepath.EvalSymlinks(p)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	a, out = canon(t.TempDir()), canon(t.TempDir())
	proj = filepath.Join(a, "x", "proj")
	if err := os.MkdirAll(proj, 0o755); err != nil {
		t.Fatal(err)
	}
	return a, proj, out
}

// NestedWorkspace is workspace-write for the project proj (the cwd and only workspace
// root) inside a writable enclosing root a: codex's profile for a project under a
// writable /tmp.
func NestedWorkspace(t testing.TB, a, proj string) *policy.Context {
	t.Helper()
	au, pu := string(pathuri.FromNative(a)), string(pathuri.FromNative(proj))
	return Context(t, `{"permissions":{"type":"managed","network":"restricted","file_system":{"type":"restricted","entries":[
		{"path":{"type":"special","value":{"kind":"root"}},"access":"read"},
		{"path":{"type":"path","path":"`+au+`"},"access":"write"},
		{"path":{"type":"special","value":{"kind":"project_roots"}},"access":"write"}]}},
		"cwd":"`+pu+`","workspaceRoots":["`+pu+`"],"windowsSandboxLevel":"disabled"}`)
}

// EnclosingOnly is a profile with the root readable and only a writable: another
// session's workspace-write with a writable /tmp, for example.
func EnclosingOnly(t testing.TB, a string) *policy.Context {
	t.Helper()
	return Context(t, `{"permissions":{"type":"managed","network":"restricted","file_system":{"type":"restricted","entries":[
		{"path":{"type":"special","value":{"kind":"root"}},"access":"read"},
		{"path":{"type":"path","path":"`+string(pathuri.FromNative(a))+`"},"access":"write"}]}},"windowsSandboxLevel":"disabled"}`)
}
