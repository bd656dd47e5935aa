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

// Issue 26 finding 2 through process/start. A first sandboxed command with the same
// policy cannot swap the nested project any more (its parent is a mount point in the
// sandbox: EBUSY), so the next process/start writes into the real project. A swap by
// a command with only the enclosing root writable succeeds, and the next process/start
// with the nested policy exits 1 with the clear refusal. Nothing lands in OUT; before
// the fix the second command wrote OUT/direct and OUT/via.
func TestStart_Sandboxed_NestedRootSwappedForSymlink(t *testing.T) {
	l := sandboxtest.Launcher(t, sandbox.BackendBubblewrap)
	a, proj, out := sandboxtest.NestedRoots(t)
	ctx := sandboxtest.NestedWorkspace(t, a, proj)
	m, n := sandboxedManager(t, l)
	start := func(id string, sb *policy.Context, script string) (*protocol.ProcessStartResult, string, event) {
		t.Helper()
		p := startParams(id, protocol.FromNative(a), "sh", "-c", script, "sh", out)
		p.Sandbox = sb
		res, output, exited, _ := runToExit(t, m, n, p)
		return res, output, exited
	}
	wantOutEmpty := func(when string) {
		t.Helper()
		if names, err := os.ReadDir(out); err != nil || len(names) > 0 {
			t.Fatalf("OUT %s holds %v (%v) %s: want it empty", out, names, err, when)
		}
	}
	const swap = `echo before > x/proj/f && mv x x.old && mkdir x && ln -s "$1" x/proj`
	const write = `echo pwned > "$1/direct"; echo pwned > x/proj/via; true`

	if _, output, exited := start("swap-same", ctx, swap); exited.code == 0 || !strings.Contains(output, "Device or resource busy") {
		t.Errorf("swap under the same policy: exit %d output %q, want mv to fail EBUSY", exited.code, output)
	}
	_, output, exited := start("write-1", ctx, write)
	wantOutEmpty("after the same-policy swap")
	if exited.code != 0 {
		t.Fatalf("process/start after the failed swap: exit %d output %q", exited.code, output)
	}
	if b, err := os.ReadFile(filepath.Join(proj, "via")); err != nil || string(b) != "pwned\n" {
		t.Fatalf("the write did not land in the real project: %q %v", b, err)
	}

	if _, output, exited := start("swap-enclosing", sandboxtest.EnclosingOnly(t, a), swap); exited.code != 0 {
		t.Fatalf("swap under the enclosing root's policy: exit %d output %q", exited.code, output)
	}
	res, output, exited := start("write-2", ctx, write)
	wantOutEmpty("after the swap")
	want := "error building bubblewrap command: Fatal error: cannot enforce sandbox writable root " + proj +
		" because it crosses writable symlink " + proj
	if res.SandboxType != protocol.SandboxTypeLinuxSeccomp || exited.code != 1 || strings.TrimSpace(output) != want {
		t.Fatalf("process/start after the swap: sandboxType %q exit %d output %q, want linuxSeccomp, exit 1, %q",
			res.SandboxType, exited.code, output, want)
	}
	if b, err := os.ReadFile(filepath.Join(a, "x.old", "proj", "f")); err != nil || string(b) != "before\n" {
		t.Errorf("the real project: %q %v, want its file intact", b, err)
	}
}
