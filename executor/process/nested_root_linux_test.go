package process_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/execlab/executor/executor/protocol"
	"github.com/execlab/executor/sandbox"
	"github.com/execlab/executor/sandbox/policy"
	"github.com/execlab/executor/sandbox/sandboxtest"
)

// nestedWorkspace is codex workspace-write for a project inside another writable root
// (as for a project under a writable /tmp): root readable, a writable, the project
// a/x/proj writable as the workspace root.
func nestedWorkspace(t *testing.T, a, proj string) *policy.Context {
	pu, au := protocol.FromNative(proj), protocol.FromNative(a)
	return sandboxContext(t, `{"permissions":{"type":"managed","network":"restricted","file_system":{"type":"restricted","entries":[
		{"path":{"type":"special","value":{"kind":"root"}},"access":"read"},
		{"path":{"type":"path","path":"`+string(au)+`"},"access":"write"},
		{"path":{"type":"special","value":{"kind":"project_roots"}},"access":"write"}]}},
		"cwd":"`+string(pu)+`","workspaceRoots":["`+string(pu)+`"],"windowsSandboxLevel":"disabled"}`)
}

// Issue 26 finding 2 through process/start: a first sandboxed command swaps the
// nested project for a symlink to OUT; the next process/start with the same policy
// exits 1 with the clear refusal, and nothing lands in OUT. (Before the fix the second
// command wrote OUT/direct and OUT/via.)
func TestStart_Sandboxed_NestedRootSwappedForSymlink(t *testing.T) {
	l := sandboxtest.Launcher(t, sandbox.BackendBubblewrap)
	canon := func(p string) string {
		c, err := filepath.EvalSymlinks(p)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	a, out := canon(t.TempDir()), canon(t.TempDir())
	proj := filepath.Join(a, "x", "proj")
	if err := os.MkdirAll(proj, 0o755); err != nil {
		t.Fatal(err)
	}
	ctx := nestedWorkspace(t, a, proj)
	m, n := sandboxedManager(t, l)

	p := startParams("swap", protocol.FromNative(a), "sh", "-c",
		`echo before > x/proj/f && mv x x.old && mkdir x && ln -s "$1" x/proj`, "sh", out)
	p.Sandbox = ctx
	if _, output, exited, _ := runToExit(t, m, n, p); exited.code != 0 {
		t.Fatalf("first process/start (the swap): exit %d, output %q", exited.code, output)
	}

	p = startParams("after", protocol.FromNative(a), "sh", "-c",
		`echo pwned > "$1/direct"; echo pwned > x/proj/via; true`, "sh", out)
	p.Sandbox = ctx
	res, output, exited, _ := runToExit(t, m, n, p)
	if names, err := os.ReadDir(out); err != nil || len(names) > 0 {
		t.Fatalf("OUT %s holds %v (%v) after the second process/start: want it empty", out, names, err)
	}
	want := "error building bubblewrap command: Fatal error: cannot enforce sandbox writable root " + proj +
		" because it crosses writable symlink " + proj
	if res.SandboxType != protocol.SandboxTypeLinuxSeccomp || exited.code != 1 || strings.TrimSpace(output) != want {
		t.Fatalf("second process/start: sandboxType %q exit %d output %q, want linuxSeccomp, exit 1, %q",
			res.SandboxType, exited.code, output, want)
	}
	if b, err := os.ReadFile(filepath.Join(a, "x.old", "proj", "f")); err != nil || string(b) != "before\n" {
		t.Errorf("the real project: %q %v, want its file intact", b, err)
	}
}
