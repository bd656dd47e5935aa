package sandbox_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/execlab/executor/sandbox"
	"github.com/execlab/executor/sandbox/policy"
	"github.com/execlab/executor/sandbox/sandboxtest"
)

func probeRun(t *testing.T, l *sandbox.Launcher, ctxJSON, cwd, probe string, args ...string) result {
	t.Helper()
	env := append(baseEnv(), probeEnv+"="+probe)
	return runSandboxed(t, l, ctxJSON, cwd, env, append([]string{l.Executable()}, args...)...)
}

func wantOut(t *testing.T, what string, res result, want string) {
	t.Helper()
	if got := strings.TrimSpace(res.stdout); got != want || res.code != 0 {
		t.Errorf("%s: got stdout %q (exit %d, stderr %q), want %q", what, got, res.code, res.stderr, want)
	}
}

func TestBubblewrap_Filesystem(t *testing.T) {
	l := sandbox.NewLauncher(sandboxtest.Require(t, sandbox.BackendBubblewrap), nil)
	w := t.TempDir()
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "f"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	rootRead := entryJSON(specialJSON("root"), "read")
	writeW := entryJSON(pathJSON(w), "write")
	ctx := managedCtx("restricted", rootRead, writeW)

	tests := []struct {
		name, ctx, probe string
		args             []string
		want             string
	}{
		{"test_root_read", managedCtx("restricted", rootRead), "read", []string{"/etc/hostname"}, "ok"},
		{"test_root_write", managedCtx("restricted", rootRead), "write", []string{filepath.Join(outside, "new")}, "EROFS"},
		{"test_writable_root", ctx, "write", []string{filepath.Join(w, "new")}, "ok"},
		{"write outside roots denied", ctx, "write", []string{filepath.Join(outside, "new")}, "EROFS"},
		{"test_dev_null_write", managedCtx("restricted", rootRead), "write", []string{"/dev/null"}, "ok"},
		{"metadata .codex uncreatable", ctx, "mkdir", []string{filepath.Join(w, ".codex")}, "EEXIST"},
		{"metadata .agents file uncreatable", ctx, "write", []string{filepath.Join(w, ".agents")}, "EISDIR"},
		{"metadata .git under", ctx, "write", []string{filepath.Join(w, ".git", "config")}, "EROFS"},
		{"ignores_missing_writable_roots", managedCtx("restricted", rootRead, writeW,
			entryJSON(pathJSON("/nonexistent/root"), "write")), "write", []string{filepath.Join(w, "y")}, "ok"},
		{"empty workspaceRoots grants nothing", strings.Replace(managedCtx("restricted", rootRead,
			entryJSON(specialJSON("project_roots"), "write")), `"windowsSandboxLevel"`, `"workspaceRoots":[],"windowsSandboxLevel"`, 1),
			"write", []string{filepath.Join(w, "z")}, "EROFS"},
		{"restricted reads hide unlisted", managedCtx("restricted", entryJSON(specialJSON("minimal"), "read")),
			"read", []string{filepath.Join(outside, "f")}, "ENOENT"},
		{"minimal reads etc", managedCtx("restricted", entryJSON(specialJSON("minimal"), "read")),
			"read", []string{"/etc/hostname"}, "ok"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wantOut(t, tt.name, probeRun(t, l, tt.ctx, "/", tt.probe, tt.args...), tt.want)
		})
	}
	wantNoMetadataLeft(t, w)
}

// wantNoMetadataLeft is host_targets_cleaned: no synthetic .git/.agents/.codex mask
// targets are left behind on the host in writable root w.
func wantNoMetadataLeft(t *testing.T, w string) {
	t.Helper()
	for _, n := range policy.ProtectedMetadataNames {
		if _, err := os.Lstat(filepath.Join(w, n)); err == nil {
			t.Errorf("host_targets_cleaned: %s left behind in the writable root", n)
		}
	}
}

func TestBubblewrap_Precedence(t *testing.T) {
	l := sandbox.NewLauncher(sandboxtest.Require(t, sandbox.BackendBubblewrap), nil)
	w := t.TempDir()
	for _, d := range []string{"a/b", "keys"} {
		if err := os.MkdirAll(filepath.Join(w, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"a/secret", "keys/x.pem", "keys/x.txt"} {
		if err := os.WriteFile(filepath.Join(w, f), []byte("s"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ctx := managedCtx("restricted", entryJSON(specialJSON("root"), "read"),
		entryJSON(pathJSON(w), "write"), entryJSON(pathJSON(filepath.Join(w, "a")), "deny"),
		entryJSON(pathJSON(filepath.Join(w, "a/b")), "write"), entryJSON(globJSON(w+"/**/*.pem"), "deny"))
	tests := []struct {
		name, probe, arg, want string
	}{
		{"write root", "write", "x", "ok"},
		{"deny hides", "read", "a/secret", "ENOENT"},
		{"deny blocks write", "write", "a/new", "EROFS"},
		{"reenabled under deny", "write", "a/b/new", "ok"},
		{"deny glob", "read", "keys/x.pem", "EACCES"},
		{"glob leaves others", "read", "keys/x.txt", "ok"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wantOut(t, tt.name, probeRun(t, l, ctx, w, tt.probe, filepath.Join(w, tt.arg)), tt.want)
		})
	}
}

func TestBubblewrap_BuildFailures(t *testing.T) {
	l := sandbox.NewLauncher(sandboxtest.Require(t, sandbox.BackendBubblewrap), nil)
	w := t.TempDir()
	if err := os.Symlink(t.TempDir(), filepath.Join(w, ".codex")); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, ctx, want string
	}{
		{"sandbox_reports_codex_symlink_build_failure_without_panicking",
			managedCtx("restricted", entryJSON(specialJSON("root"), "read"), entryJSON(pathJSON(w), "write")),
			"error building bubblewrap command: Fatal error: cannot enforce sandbox read-only path " + w + "/.codex because it crosses writable symlink " + w + "/.codex"},
		{"too_broad_glob_refused",
			managedCtx("restricted", entryJSON(specialJSON("root"), "read"), entryJSON(globJSON("/**/x"), "deny")),
			"error building bubblewrap command: Fatal error: unreadable glob `/**/x` cannot be safely expanded; use a pattern with a non-root directory prefix"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := runSandboxed(t, l, tt.ctx, "/", baseEnv(), "true")
			if res.code != 1 || strings.TrimSpace(res.stderr) != tt.want {
				t.Fatalf("got exit %d stderr %q, want exit 1 %q", res.code, res.stderr, tt.want)
			}
		})
	}
}

func TestBubblewrap_SecurityState(t *testing.T) {
	l := sandbox.NewLauncher(sandboxtest.Require(t, sandbox.BackendBubblewrap), nil)
	ctx := managedCtx("restricted", entryJSON(specialJSON("root"), "read"))
	res := probeRun(t, l, ctx, "/", "status")
	want := "CapPrm: 0000000000000000\nCapEff: 0000000000000000\nNoNewPrivs: 1\nSeccomp: 2"
	if got := strings.TrimSpace(res.stdout); got != want {
		t.Errorf("no caps + NNP: got %q, want %q (stderr %q)", got, want, res.stderr)
	}
	arg0 := "custom-arg0"
	c := sandboxtest.Context(t, ctx)
	p, err := policy.Resolve(c, &policy.ResolveOptions{CommandCwd: "/"})
	if err != nil {
		t.Fatal(err)
	}
	res = runPolicy(t, l, p, "/", append(baseEnv(), probeEnv+"=argv0"), &arg0, l.Executable())
	if got := strings.TrimSpace(res.stdout); got != arg0 {
		t.Errorf("custom arg0: got %q, want %q (stderr %q)", got, arg0, res.stderr)
	}
}

func TestBubblewrap_Network(t *testing.T) {
	l := sandbox.NewLauncher(sandboxtest.Require(t, sandbox.BackendBubblewrap), nil)
	sockDir := t.TempDir()
	sock := filepath.Join(sockDir, "s")
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	if err := unix.Bind(fd, &unix.SockaddrUnix{Name: sock}); err != nil {
		t.Fatal(err)
	}
	if err := unix.Listen(fd, 1); err != nil {
		t.Fatal(err)
	}
	restricted := managedCtx("restricted", entryJSON(specialJSON("root"), "read"))
	enabled := managedCtx("enabled", entryJSON(specialJSON("root"), "read"))
	tests := []struct {
		name, ctx, probe string
		args             []string
		want             string
	}{
		{"network blocked", restricted, "tcp", nil, "EPERM"},
		{"AF_UNIX connect denied", restricted, "unix-connect", []string{sock}, "EPERM"},
		{"socketpair allowed", restricted, "socketpair", nil, "ok"},
		{"io_uring denied", restricted, "io_uring", nil, "EPERM"},
		{"ptrace denied", restricted, "ptrace", nil, "EPERM"},
		{"vm socket mode: tcp allowed", enabled, "tcp", nil, "ok"},
		{"vm socket mode: unix reachable", enabled, "unix-connect", []string{sock}, "ok"},
		{"vm socket mode: vsock denied", enabled, "vsock", nil, "EPERM"},
		{"vm socket mode: io_uring denied", enabled, "io_uring", nil, "EPERM"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wantOut(t, tt.name, probeRun(t, l, tt.ctx, "/", tt.probe, tt.args...), tt.want)
		})
	}
}

func TestPlain_Plans(t *testing.T) {
	l := sandbox.NewLauncher(sandboxtest.Require(t, sandbox.BackendBubblewrap), nil)
	w := t.TempDir()
	fullWrite := managedCtx("restricted", entryJSON(specialJSON("root"), "write"))
	res := probeRun(t, l, fullWrite, "/", "tcp")
	wantOut(t, "row 3 network", res, "EPERM")
	if res.cmd.Backend != "plain" {
		t.Errorf("row 3 backend: got %q, want plain", res.cmd.Backend)
	}
	wantOut(t, "row 3 write", probeRun(t, l, fullWrite, "/", "write", filepath.Join(w, "f")), "ok")
	disabled := `{"permissions":{"type":"disabled"},"windowsSandboxLevel":"disabled"}`
	res = probeRun(t, l, disabled, "/", "status")
	if !strings.Contains(res.stdout, "Seccomp: 0") || res.cmd.Backend != "plain" || res.cmd.SandboxType != sandbox.SandboxTypeLinuxSeccomp {
		t.Errorf("full_disk_write_full_network_returns_unwrapped_command: got %q backend %q type %q", res.stdout, res.cmd.Backend, res.cmd.SandboxType)
	}
}

func TestStage_Failures(t *testing.T) {
	l := sandbox.NewLauncher(sandboxtest.Require(t, sandbox.BackendBubblewrap), nil)
	// useLegacyLandlock with a restricted policy: exit 101 with a sandbox-tagged message.
	ctx := strings.Replace(managedCtx("restricted", entryJSON(specialJSON("root"), "read")),
		`"windowsSandboxLevel"`, `"useLegacyLandlock":true,"windowsSandboxLevel"`, 1)
	res := runSandboxed(t, l, ctx, "/", baseEnv(), "true")
	if res.code != 101 || !strings.Contains(res.stderr, "filesystem-restricted execution requires bubblewrap to isolate app-server sockets") {
		t.Errorf("legacy_landlock_flag_rejected: got exit %d stderr %q", res.code, res.stderr)
	}
	if d, _ := sandbox.Denied(true, res.code, nil, []byte(res.stderr), nil); !d {
		t.Errorf("legacy landlock: got sandboxDenied false, want true")
	}
	// sandbox_inner_stage_rejects_retained_capabilities: the inner stage run directly
	// as root (full capabilities) must refuse.
	if os.Geteuid() == 0 {
		p, _ := (&policy.Policy{Restricted: false, Cwd: "/"}).Encode()
		res := runRaw(t, l.Executable(), []string{sandbox.StageFlag, "--permission-profile", p, "--apply-seccomp-then-exec", "--", "true"})
		if res.code != 1 || strings.TrimSpace(res.stderr) != "Linux sandbox retained effective or permitted capabilities" {
			t.Errorf("inner stage with caps: got exit %d stderr %q", res.code, res.stderr)
		}
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{sandbox.StageFlag, "--", "true"}, "missing permission profile configuration"},
		{[]string{sandbox.StageFlag, "--permission-profile", `{"cwd":"/"}`, "--"}, "No command specified to execute."},
	} {
		res := runRaw(t, l.Executable(), tt.args)
		if res.code != 1 || strings.TrimSpace(res.stderr) != tt.want {
			t.Errorf("stage %q: got exit %d stderr %q, want 1 %q", tt.args, res.code, res.stderr, tt.want)
		}
	}
}

// A command the stage cannot execute exits 101 with the reference's execvp line
// (sandboxDenied true), on every plan: inner stage (bubblewrap) and plain.
func TestStage_ExecFailures(t *testing.T) {
	l := sandbox.NewLauncher(sandboxtest.Require(t, sandbox.BackendBubblewrap), nil)
	dir := t.TempDir()
	noExec := filepath.Join(dir, "noexec")
	if err := os.WriteFile(noExec, []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	readList := managedCtx("restricted", entryJSON(specialJSON("minimal"), "read"), entryJSON(pathJSON(dir), "read"))
	plain := managedCtx("restricted", entryJSON(specialJSON("root"), "write"))
	tests := []struct {
		name, ctx, prog, want string
	}{
		{"not on PATH, bubblewrap", readList, "no-such-program-xyz",
			"Failed to execvp no-such-program-xyz: No such file or directory (os error 2)"},
		{"missing absolute path, bubblewrap", readList, "/nonexistent/dir/prog",
			"Failed to execvp /nonexistent/dir/prog: No such file or directory (os error 2)"},
		{"not executable, bubblewrap", readList, noExec,
			"Failed to execvp " + noExec + ": Permission denied (os error 13)"},
		{"not on PATH, plain", plain, "no-such-program-xyz",
			"Failed to execvp no-such-program-xyz: No such file or directory (os error 2)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := runSandboxed(t, l, tt.ctx, "/", baseEnv(), tt.prog)
			if res.code != 101 || !strings.Contains(res.stderr, tt.want) {
				t.Errorf("got exit %d, stderr %q; want 101 with %q", res.code, res.stderr, tt.want)
			}
			if d, _ := sandbox.Denied(true, res.code, nil, []byte(res.stderr), nil); !d {
				t.Errorf("got sandboxDenied false, want true")
			}
		})
	}
}

// A command cwd the profile hides does not fail the launch: the command starts in
// $HOME when visible, else "/" (bwrap's fallback, as in the reference).
func TestBubblewrap_HiddenCwd(t *testing.T) {
	l := sandbox.NewLauncher(sandboxtest.Require(t, sandbox.BackendBubblewrap), nil)
	hidden := t.TempDir()
	home := t.TempDir()
	visible := t.TempDir()
	alias := filepath.Join(t.TempDir(), "alias")
	if err := os.Symlink(visible, alias); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, ctx, cwd, home, want string
	}{
		{"hidden cwd, hidden home: /", managedCtx("restricted", entryJSON(specialJSON("minimal"), "read")), hidden, home, "/"},
		{"hidden cwd, visible home: home", managedCtx("restricted", entryJSON(specialJSON("minimal"), "read"),
			entryJSON(pathJSON(home), "read")), hidden, home, home},
		{"visible cwd", managedCtx("restricted", entryJSON(specialJSON("minimal"), "read"),
			entryJSON(pathJSON(visible), "read")), visible, home, visible},
		{"symlink alias cwd: --chdir to its target", managedCtx("restricted", entryJSON(specialJSON("minimal"), "read"),
			entryJSON(pathJSON(visible), "read")), alias, home, visible},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := []string{"PATH=/usr/bin:/bin", "HOME=" + tt.home}
			res := runSandboxed(t, l, tt.ctx, tt.cwd, env, "/bin/sh", "-c", "pwd")
			if got := strings.TrimSpace(res.stdout); got != tt.want || res.code != 0 {
				t.Errorf("got cwd %q (exit %d, stderr %q), want %q", got, res.code, res.stderr, tt.want)
			}
		})
	}
}

// ancestor_rename_blocked (spec §6): the directories between a writable root and a
// read-only carve-out are mount points, so renaming one away to recreate the
// carve-out's path writable fails EBUSY, and the carve-out stays read-only.
func TestBubblewrap_AncestorRenameBlocked(t *testing.T) {
	l := sandbox.NewLauncher(sandboxtest.Require(t, sandbox.BackendBubblewrap), nil)
	w := t.TempDir()
	if err := os.MkdirAll(filepath.Join(w, "a/b"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(w, "a/b/f"), []byte("ro"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := managedCtx("restricted", entryJSON(specialJSON("root"), "read"),
		entryJSON(pathJSON(w), "write"), entryJSON(pathJSON(filepath.Join(w, "a/b")), "read"))
	tests := []struct {
		name, probe string
		args        []string
		want        string
	}{
		{"carve-out read-only", "write", []string{filepath.Join(w, "a/b/f")}, "EROFS"},
		{"sibling of carve-out writable", "write", []string{filepath.Join(w, "a/g")}, "ok"},
		{"rename ancestor", "rename-then-write", []string{filepath.Join(w, "a"), filepath.Join(w, "a2"), "b/f"}, "EBUSY"},
		{"rename carve-out", "rename-then-write", []string{filepath.Join(w, "a/b"), filepath.Join(w, "a/b2"), "f"}, "EBUSY"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wantOut(t, tt.name, probeRun(t, l, ctx, w, tt.probe, tt.args...), tt.want)
		})
	}
	if b, err := os.ReadFile(filepath.Join(w, "a/b/f")); err != nil || string(b) != "ro" {
		t.Errorf("host carve-out file: got %q, %v; want %q unchanged", b, err, "ro")
	}
}
