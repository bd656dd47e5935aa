package sandbox_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/execlab/executor/sandbox"
	"github.com/execlab/executor/sandbox/sandboxtest"
)

// makeDaemonDir makes sure the app-server socket directory /tmp/codex-daemon-<euid>
// exists (mode 0700, as codex creates it) for the duration of the test, and removes it
// afterwards only if the test created it.
func makeDaemonDir(t *testing.T) string {
	t.Helper()
	d := "/tmp/codex-daemon-" + strconv.Itoa(os.Geteuid())
	switch err := os.Mkdir(d, 0o700); {
	case err == nil:
		t.Cleanup(func() { os.Remove(d) })
	case errors.Is(err, fs.ErrExist):
		fi, err := os.Lstat(d)
		if err != nil || !fi.IsDir() {
			t.Fatalf("%s exists but is not a directory (%v)", d, err)
		}
	default:
		t.Fatalf("creating %s: %v", d, err)
	}
	return d
}

// The codex CLI's profiles (as it sends them in process/start's sandbox param,
// spec/sandbox.md §1.5) run under bubblewrap on a machine where codex has run before,
// i.e. with /tmp/codex-daemon-<euid> present: the command runs, its output comes back,
// the daemon directory is neither listable, readable nor writable from inside, and
// /tmp is writable exactly where the profile says so. Field bug (issue 12): with a
// writable /tmp every command failed with "bwrap: Can't remount readonly on
// /newroot/tmp/codex-daemon-0", because the directory's tmpfs mask had been covered by
// the later --bind /tmp /tmp before the deferred --remount-ro (a denied /tmp failed
// the same way).
func TestBubblewrap_DaemonDirHidden(t *testing.T) {
	l := sandbox.NewLauncher(sandboxtest.Require(t, sandbox.BackendBubblewrap), nil)
	daemon := makeDaemonDir(t)
	// A file the command must not see. The directory may be a real codex's: the name
	// is unique and removed afterwards.
	sentinel := filepath.Join(daemon, "executor-test-sentinel-"+strconv.Itoa(os.Getpid()))
	if err := os.WriteFile(sentinel, []byte("secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove(sentinel) })

	w := t.TempDir()
	gitWorkTree(t, w)
	readOnly := []string{entryJSON(specialJSON("root"), "read")}
	workspaceWrite := []string{entryJSON(specialJSON("root"), "read"),
		entryJSON(specialJSON("project_roots"), "write"),
		entryJSON(specialJSON("slash_tmp"), "write"),
		entryJSON(specialJSON("tmpdir"), "write"),
		skipJSON(projectSubpathJSON(".git"), "read"),
		skipJSON(projectSubpathJSON(".agents"), "read"),
		skipJSON(projectSubpathJSON(".codex"), "read")}
	withRoots := func(ctx string) string {
		return strings.Replace(ctx, `"windowsSandboxLevel"`,
			`"cwd":"`+fileURI(w)+`","workspaceRoots":["`+fileURI(w)+`"],"windowsSandboxLevel"`, 1)
	}
	tests := []struct {
		name, ctx string
		tmpWrite  bool
	}{
		{"read-only", withRoots(managedCtx("restricted", readOnly...)), false},
		{"workspace-write", withRoots(managedCtx("restricted", workspaceWrite...)), true},
		{"workspace-write, network enabled", withRoots(managedCtx("enabled", workspaceWrite...)), true},
		// The deferred remount then targeted a path inside the later /tmp tmpfs.
		{"denied /tmp", withRoots(managedCtx("restricted", entryJSON(specialJSON("root"), "read"),
			entryJSON(pathJSON("/tmp"), "deny"))), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tmpFile := filepath.Join("/tmp", "executor-daemon-test-"+strconv.Itoa(os.Getpid())+"-"+strings.ReplaceAll(tt.name, " ", "_"))
			os.Remove(tmpFile)
			t.Cleanup(func() { os.Remove(tmpFile) })
			script := `echo ran
ls -A "$1" 2>/dev/null | grep -q . && echo "daemon=listed" || echo "daemon=unlisted"
cat "$2" >/dev/null 2>&1 && echo "sentinel=read" || echo "sentinel=unreadable"
(echo x >"$1/created") 2>/dev/null && echo "daemon-write=ok" || echo "daemon-write=denied"
(echo x >"$3") 2>/dev/null && echo "tmp-write=ok" || echo "tmp-write=denied"
(echo x >.git/executor-test) 2>/dev/null && echo "git-write=ok" || echo "git-write=denied"
`
			res := runSandboxed(t, l, tt.ctx, w, baseEnv(), "/bin/sh", "-c", script, "sh", daemon, sentinel, tmpFile)
			if res.code != 0 {
				t.Fatalf("command failed: exit %d, stdout %q, stderr %q", res.code, res.stdout, res.stderr)
			}
			tmpWant := "tmp-write=denied"
			if tt.tmpWrite {
				tmpWant = "tmp-write=ok"
			}
			want := "ran\ndaemon=unlisted\nsentinel=unreadable\ndaemon-write=denied\n" + tmpWant + "\ngit-write=denied"
			if got := strings.TrimSpace(res.stdout); got != want {
				t.Errorf("got\n%s\nwant\n%s\n(stderr %q)", got, want, res.stderr)
			}
			if _, err := os.Lstat(filepath.Join(daemon, "created")); err == nil {
				os.Remove(filepath.Join(daemon, "created"))
				t.Errorf("the command created a file in the host's %s", daemon)
			}
			if _, err := os.Lstat(tmpFile); (err == nil) != tt.tmpWrite {
				t.Errorf("host %s exists: %v, want %v", tmpFile, err == nil, tt.tmpWrite)
			}
		})
	}
}

func projectSubpathJSON(sub string) string {
	return `{"type":"special","value":{"kind":"project_roots","subpath":"` + sub + `"}}`
}

func skipJSON(pathJSON, access string) string {
	return `{"path":` + pathJSON + `,"access":"` + access + `","missing_path_behavior":"skip"}`
}

// Mount-order audit (issue 12), end to end: a read-only carve-out of a symlinked
// writable root whose target lies inside another, deeper-bound writable root stays
// read-only (it was bound before that root and covered by it), and the mount registry
// under a symlinked $TMPDIR is re-bound read-only at its real path (bwrap failed to
// create the mount point through the symlink, so every launch failed).
func TestBubblewrap_MountOrderAudit(t *testing.T) {
	l := sandbox.NewLauncher(sandboxtest.Require(t, sandbox.BackendBubblewrap), nil)
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	inner := filepath.Join(base, "x", "y", "z", "t")
	for _, n := range []string{".git", ".agents", ".codex", ".aws"} {
		if err := os.MkdirAll(filepath.Join(inner, n), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(inner, n, "keep"), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	link := filepath.Join(base, "l")
	if err := os.Symlink(inner, link); err != nil {
		t.Fatal(err)
	}
	realTmp := filepath.Join(base, "realtmp")
	if err := os.MkdirAll(filepath.Join(realTmp, "codex-bwrap-synthetic-mount-targets-"+strconv.Itoa(os.Geteuid())), 0o700); err != nil {
		t.Fatal(err)
	}
	tmpLink := filepath.Join(base, "tmplink")
	if err := os.Symlink(realTmp, tmpLink); err != nil {
		t.Fatal(err)
	}

	t.Run("symlinked root inside a deeper writable root", func(t *testing.T) {
		ctx := managedCtx("restricted", entryJSON(specialJSON("root"), "read"),
			entryJSON(pathJSON(link), "write"), entryJSON(pathJSON(filepath.Join(base, "x", "y", "z")), "write"))
		script := `(echo x >"$1/new") 2>/dev/null && echo root=ok || echo root=denied
(echo x >"$1/.git/new") 2>/dev/null && echo git=ok || echo git=denied`
		res := runSandboxed(t, l, ctx, "/", baseEnv(), "/bin/sh", "-c", script, "sh", inner)
		if got, want := strings.TrimSpace(res.stdout), "root=ok\ngit=denied"; got != want || res.code != 0 {
			t.Errorf("got %q (exit %d, stderr %q), want %q", got, res.code, res.stderr, want)
		}
		os.Remove(filepath.Join(inner, ".git", "new"))
	})
	t.Run("registry under a symlinked TMPDIR", func(t *testing.T) {
		ctx := managedCtx("restricted", entryJSON(specialJSON("root"), "read"), entryJSON(specialJSON("tmpdir"), "write"))
		script := `(echo x >"$TMPDIR/f") 2>/dev/null && echo tmpdir=ok || echo tmpdir=denied
(echo x >"$TMPDIR/codex-bwrap-synthetic-mount-targets-$1/f") 2>/dev/null && echo registry=ok || echo registry=denied`
		res := runSandboxed(t, l, ctx, "/", append(baseEnv(), "TMPDIR="+tmpLink), "/bin/sh", "-c", script, "sh", strconv.Itoa(os.Geteuid()))
		if got, want := strings.TrimSpace(res.stdout), "tmpdir=ok\nregistry=denied"; got != want || res.code != 0 {
			t.Errorf("got %q (exit %d, stderr %q), want %q", got, res.code, res.stderr, want)
		}
	})
}

// An existing deny path below the implicit deny of a tmpfs root (a `minimal: read`
// profile) is masked, not just left out: the command gets EACCES, as under the
// reference (observed from codex 0.169.0 and 0.171.0: `cat /etc/hostname` with /etc
// denied says "Permission denied" and sandboxDenied is true; ours said "No such file or
// directory" and the denial went unnoticed).
func TestBubblewrap_DenyBelowTmpfsRootIsMasked(t *testing.T) {
	l := sandbox.NewLauncher(sandboxtest.Require(t, sandbox.BackendBubblewrap), nil)
	w := t.TempDir()
	denied := filepath.Join(t.TempDir(), "denied")
	if err := os.MkdirAll(denied, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(denied, "f"), []byte("secret"), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, target := range map[string]string{"directory": denied, "platform root": "/etc"} {
		t.Run(name, func(t *testing.T) {
			ctx := strings.Replace(managedCtx("restricted", entryJSON(specialJSON("minimal"), "read"),
				entryJSON(pathJSON(target), "deny")), `"windowsSandboxLevel"`,
				`"cwd":"`+fileURI(w)+`","workspaceRoots":["`+fileURI(w)+`"],"windowsSandboxLevel"`, 1)
			file := filepath.Join(target, "f")
			if target == "/etc" {
				file = "/etc/hostname"
			}
			res := runSandboxed(t, l, ctx, w, baseEnv(), "/bin/cat", file)
			if res.code == 0 || !strings.Contains(res.stderr+res.stdout, "Permission denied") {
				t.Fatalf("cat %s: exit %d, stdout %q, stderr %q; want Permission denied", file, res.code, res.stdout, res.stderr)
			}
		})
	}
}
