package sandbox_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/execlab/executor/sandbox"
	"github.com/execlab/executor/sandbox/sandboxtest"
)

// The Linux root-write behaviour behind linuxRootWritePreservesDevices and
// linuxApprovedRootWritePreservesRestrictions (spec capabilities-0.171.0.md §11),
// observed from codex 0.171.0 and 0.169.0 and replayed against them by the
// sandbox_root_* conformance scenarios.

// bwrapDevNames is the /dev that bubblewrap's --dev creates (observed: `ls /dev` under a
// root=read profile, both releases).
var bwrapDevNames = []string{"core", "fd", "full", "null", "ptmx", "pts", "random", "shm", "stderr",
	"stdin", "stdout", "tty", "urandom", "zero"}

// hostOnlyDevice names a device node of the host that the bwrap /dev lacks
// (/dev/loop-control on the project machines), failing when the host has none.
func hostOnlyDevice(t *testing.T) string {
	t.Helper()
	if _, err := os.Stat("/dev/loop-control"); err == nil {
		return "/dev/loop-control"
	}
	ents, err := os.ReadDir("/dev")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if e.Type()&os.ModeDevice != 0 && !contains(bwrapDevNames, e.Name()) {
			return "/dev/" + e.Name()
		}
	}
	t.Fatalf("the host /dev has no device beyond the bwrap set %v", bwrapDevNames)
	return ""
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func skipReadJSON(sub string) string {
	return `{"path":{"type":"special","value":{"kind":"project_roots","subpath":"` + sub +
		`"}},"access":"read","missing_path_behavior":"skip"}`
}

// projectCtx is a managed context whose workspace root (and cwd) is ws.
func projectCtx(network, ws string, entries ...string) string {
	c := managedCtx(network, entries...)
	return strings.Replace(c, `"windowsSandboxLevel"`, `"cwd":"`+fileURI(ws)+`","workspaceRoots":["`+fileURI(ws)+
		`"],"windowsSandboxLevel"`, 1)
}

func newWorkspace(t *testing.T) string {
	t.Helper()
	ws, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	gitWorkTree(t, ws)
	return ws
}

func TestBubblewrap_RootWriteDevices(t *testing.T) {
	l := sandbox.NewLauncher(sandboxtest.Require(t, sandbox.BackendBubblewrap), nil)
	dev := hostOnlyDevice(t)
	ws := newWorkspace(t)
	shm := filepath.Join("/dev/shm", "executor-rootwrite-test-"+filepath.Base(ws))
	t.Cleanup(func() { os.Remove(shm) })
	const script = `test -e "$1" && echo host-device; echo x > /dev/null && echo null; ` +
		`head -c 8 /dev/urandom | wc -c; ls /dev | tr '\n' ' '; echo; touch "$2" && echo shm`
	rootWrite, rootRead := entryJSON(specialJSON("root"), "write"), entryJSON(specialJSON("root"), "read")
	tests := []struct {
		name, ctx string
		hostDev   bool // the host /dev (no bubblewrap)
		hostShm   bool // a file created in /dev/shm lands on the host
	}{
		{"root write alone, network restricted", projectCtx("restricted", ws, rootWrite), true, true},
		{"root write alone, network enabled", projectCtx("enabled", ws, rootWrite), true, true},
		{"root write with carve-outs", projectCtx("restricted", ws, rootWrite, skipReadJSON(".git"), skipReadJSON(".codex")), false, true},
		{"root read", projectCtx("restricted", ws, rootRead), false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			os.Remove(shm)
			res := runSandboxed(t, l, tt.ctx, ws, baseEnv(), "sh", "-c", script, "sh", dev, shm)
			lines := strings.Split(strings.TrimSpace(res.stdout), "\n")
			if res.code != 0 && tt.hostShm || len(lines) < 3 {
				t.Fatalf("got exit %d stdout %q stderr %q", res.code, res.stdout, res.stderr)
			}
			if got := lines[0] == "host-device"; got != tt.hostDev {
				t.Errorf("%s visible = %v, want %v (stdout %q)", dev, got, tt.hostDev, res.stdout)
			}
			if tt.hostDev {
				lines = lines[1:]
			}
			if lines[0] != "null" || strings.TrimSpace(lines[1]) != "8" {
				t.Errorf("/dev/null, /dev/urandom: got %q, want null and 8 bytes", lines[:2])
			}
			if !tt.hostDev {
				if got, want := strings.Fields(lines[2]), bwrapDevNames; strings.Join(got, " ") != strings.Join(want, " ") {
					t.Errorf("ls /dev: got %v, want the bwrap /dev %v", got, want)
				}
			}
			_, err := os.Stat(shm)
			if got := err == nil; got != tt.hostShm {
				t.Errorf("file created in /dev/shm on the host = %v, want %v (stdout %q stderr %q)", got, tt.hostShm, res.stdout, res.stderr)
			}
		})
	}
}

// The codex CLI's approved root write: root=write plus project_roots .git/.agents/.codex
// read entries marked skip. The carve-outs stay enforced, missing ones included.
func TestBubblewrap_ApprovedRootWriteKeepsCarveOuts(t *testing.T) {
	l := sandbox.NewLauncher(sandboxtest.Require(t, sandbox.BackendBubblewrap), nil)
	ws := newWorkspace(t)
	outside := t.TempDir()
	ctx := projectCtx("restricted", ws, entryJSON(specialJSON("root"), "write"),
		skipReadJSON(".git"), skipReadJSON(".agents"), skipReadJSON(".codex"), skipReadJSON("missing/deeper"))
	res := runSandboxed(t, l, ctx, ws, baseEnv(), "sh", "-c", `
		echo x > .git/HEAD 2>/dev/null && echo git-writable
		mkdir .codex 2>/dev/null && echo codex-created
		test -d .codex && echo codex-dir
		echo x > .agents 2>/dev/null && echo agents-created
		mkdir -p missing/x 2>/dev/null && echo missing-created
		echo ok > f && echo ok > "$1/g" && echo wrote`, "sh", outside)
	if got, want := strings.Fields(res.stdout), []string{"codex-dir", "wrote"}; strings.Join(got, " ") != strings.Join(want, " ") || res.code != 0 {
		t.Errorf("got stdout %q (exit %d, stderr %q), want %v", res.stdout, res.code, res.stderr, want)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, ".git", "HEAD")); string(b) != "ref\n" {
		t.Errorf(".git/HEAD changed to %q", b)
	}
	for _, n := range []string{".codex", ".agents", "missing"} {
		if _, err := os.Lstat(filepath.Join(ws, n)); err == nil {
			t.Errorf("%s left behind on the host", n)
		}
	}
	for _, f := range []string{filepath.Join(ws, "f"), filepath.Join(outside, "g")} {
		if _, err := os.Stat(f); err != nil {
			t.Errorf("write did not land: %v", err)
		}
	}
}

// A symlinked .codex carve-out under an approved root write fails the launch closed with
// the reference's text; nothing runs and the symlink target is untouched.
func TestBubblewrap_ApprovedRootWriteSymlinkedCarveOut(t *testing.T) {
	l := sandbox.NewLauncher(sandboxtest.Require(t, sandbox.BackendBubblewrap), nil)
	ws := newWorkspace(t)
	target := t.TempDir()
	link := filepath.Join(ws, ".codex")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	for _, access := range []string{"read", "deny"} {
		entry := `{"path":{"type":"special","value":{"kind":"project_roots","subpath":".codex"}},"access":"` + access + `"}`
		ctx := projectCtx("restricted", ws, entryJSON(specialJSON("root"), "write"), skipReadJSON(".git"), entry)
		res := runSandboxed(t, l, ctx, ws, baseEnv(), "sh", "-c", `echo ran; touch .codex/x`)
		kind := map[string]string{"read": "read-only", "deny": "deny-read"}[access]
		want := "error building bubblewrap command: Fatal error: cannot enforce sandbox " + kind + " path " + link +
			" because it crosses writable symlink " + link
		if res.code != 1 || strings.TrimSpace(res.stderr) != want || res.stdout != "" {
			t.Errorf("%s: got exit %d stdout %q stderr %q, want exit 1 and %q", access, res.code, res.stdout, res.stderr, want)
		}
	}
	if ents, _ := os.ReadDir(target); len(ents) != 0 {
		t.Errorf("symlink target changed: %v", ents)
	}
}
