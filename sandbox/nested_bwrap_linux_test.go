package sandbox_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/execlab/executor/sandbox"
	"github.com/execlab/executor/sandbox/policy"
	"github.com/execlab/executor/sandbox/sandboxtest"
)

// nestedRoots is the issue 26 layout: A writable, the project A/x/proj writable too
// (codex workspace-write with the project under a writable /tmp), OUT outside every
// writable root.
type nestedRoots struct{ a, proj, out, ctx string }

func newNestedRoots(t *testing.T) nestedRoots {
	t.Helper()
	var n nestedRoots
	n.a, n.proj, n.out = sandboxtest.NestedRoots(t)
	n.ctx = managedCtx("restricted", entryJSON(specialJSON("root"), "read"),
		entryJSON(pathJSON(n.a), "write"), entryJSON(pathJSON(n.proj), "write"))
	return n
}

// wantOutEmpty fails unless OUT is still empty.
func wantOutEmpty(t *testing.T, out string) {
	t.Helper()
	names, err := os.ReadDir(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(names) > 0 {
		var got []string
		for _, n := range names {
			got = append(got, n.Name())
		}
		t.Fatalf("sandboxed commands wrote into %s, outside every writable root: %q", out, got)
	}
}

func refusalFor(root, symlink string) string {
	return "error building bubblewrap command: Fatal error: cannot enforce sandbox writable root " + root +
		" because it crosses writable symlink " + symlink
}

// Issue 26 finding 2, between two real launches: a first command tries to swap the
// nested project for a symlink to OUT, then a second command with the nested policy
// writes through the project path. With the same policy for both, the swap itself now
// fails (the project's parent is a mount point in the sandbox: EBUSY) and the second
// write lands in the real project. When the swap comes from a command that has only
// the enclosing root writable (another session with a writable /tmp), the second
// launch is refused with the clear error. Either way nothing lands in OUT; before the
// fix both variants wrote OUT/direct and OUT/via.
func TestBubblewrap_NestedRootSwappedForSymlink(t *testing.T) {
	l := sandbox.NewLauncher(sandboxtest.Require(t, sandbox.BackendBubblewrap), nil)
	swap := `echo before > "$1/f" && mv "$2" "$2.old" && mkdir "$2" && ln -s "$3" "$4"`
	write := `echo pwned > "$1/direct"; echo pwned > "$2/via"; true`

	t.Run("same policy", func(t *testing.T) {
		n := newNestedRoots(t)
		x := filepath.Dir(n.proj)
		res := runSandboxed(t, l, n.ctx, n.a, baseEnv(), "sh", "-c", swap, "sh", n.proj, x, n.out, n.proj)
		if res.code == 0 || !strings.Contains(res.stderr, "Device or resource busy") {
			t.Errorf("first launch (the swap): exit %d stderr %q, want mv to fail EBUSY", res.code, res.stderr)
		}
		res = runSandboxed(t, l, n.ctx, n.a, baseEnv(), "sh", "-c", write, "sh", n.out, n.proj)
		wantOutEmpty(t, n.out)
		if res.code != 0 {
			t.Fatalf("second launch: exit %d stderr %q", res.code, res.stderr)
		}
		if b, err := os.ReadFile(filepath.Join(n.proj, "via")); err != nil || string(b) != "pwned\n" {
			t.Errorf("the second write did not land in the real project: %q %v", b, err)
		}
	})

	t.Run("swap from the enclosing root's policy", func(t *testing.T) {
		n := newNestedRoots(t)
		x := filepath.Dir(n.proj)
		enclosing := managedCtx("restricted", entryJSON(specialJSON("root"), "read"), entryJSON(pathJSON(n.a), "write"))
		res := runSandboxed(t, l, enclosing, n.a, baseEnv(), "sh", "-c", swap, "sh", n.proj, x, n.out, n.proj)
		if res.code != 0 {
			t.Fatalf("first launch (the swap): exit %d, stderr %q", res.code, res.stderr)
		}
		if fi, err := os.Lstat(n.proj); err != nil || fi.Mode()&os.ModeSymlink == 0 {
			t.Fatalf("the swap did not happen: %v %v", fi, err)
		}
		res = runSandboxed(t, l, n.ctx, n.a, baseEnv(), "sh", "-c", write, "sh", n.out, n.proj)
		wantOutEmpty(t, n.out)
		if want := refusalFor(n.proj, n.proj); res.code != 1 || strings.TrimSpace(res.stderr) != want {
			t.Fatalf("second launch: exit %d stderr %q, want exit 1 %q", res.code, res.stderr, want)
		}
		if b, err := os.ReadFile(filepath.Join(x+".old", "proj", "f")); err != nil || string(b) != "before\n" {
			t.Errorf("the real project lost its file: %q %v", b, err)
		}
	})
}

// A nested root without symlinks keeps working (codex workspace-write with the
// project under a writable /tmp): the project is writable, its .git read-only.
func TestBubblewrap_NestedRootWithoutSymlinks(t *testing.T) {
	l := sandbox.NewLauncher(sandboxtest.Require(t, sandbox.BackendBubblewrap), nil)
	n := newNestedRoots(t)
	gitWorkTree(t, n.proj)
	res := runSandboxed(t, l, n.ctx, n.proj, baseEnv(), "sh", "-c",
		`echo ok > f && echo ok > ../sibling && if echo x > .git/HEAD 2>/dev/null; then echo git-writable; fi; `+
			`if echo x > "$1/out" 2>/dev/null; then echo out-writable; fi`, "sh", n.out)
	if res.code != 0 || strings.TrimSpace(res.stdout) != "" {
		t.Fatalf("got exit %d stdout %q stderr %q, want a clean run", res.code, res.stdout, res.stderr)
	}
	for _, f := range []string{filepath.Join(n.proj, "f"), filepath.Join(n.a, "x", "sibling")} {
		if _, err := os.Stat(f); err != nil {
			t.Errorf("write did not land: %v", err)
		}
	}
	wantOutEmpty(t, n.out)
}

// A swap racing the launch: a goroutine exchanges A/x (holding the real project) with
// A/y (holding proj -> OUT) as fast as it can while the policy is launched N times.
// Each launch runs with the real project bound or fails closed (the refusal, or
// bubblewrap's descriptor check); nothing ever lands in OUT.
func TestBubblewrap_NestedRootSwapRacingLaunch(t *testing.T) {
	l := sandbox.NewLauncher(sandboxtest.Require(t, sandbox.BackendBubblewrap), nil)
	n := newNestedRoots(t)
	x, y := filepath.Dir(n.proj), filepath.Join(n.a, "y")
	if err := os.MkdirAll(y, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(n.out, filepath.Join(y, "proj")); err != nil {
		t.Fatal(err)
	}

	const launches = 16
	const budget = 90 * time.Second // bounded under load
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var flips int
	wg.Add(1)
	go func() { // the attacker; stopped and waited for below
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			if err := unix.Renameat2(unix.AT_FDCWD, x, unix.AT_FDCWD, y, unix.RENAME_EXCHANGE); err == nil {
				flips++
			}
			time.Sleep(200 * time.Microsecond)
		}
	}()
	outcomes := map[string]int{}
	seen := map[string]bool{} // distinct failure messages, logged
	deadline := time.Now().Add(budget)
	for i := 0; i < launches && time.Now().Before(deadline); i++ {
		res := runSandboxed(t, l, n.ctx, "/", baseEnv(), "sh", "-c",
			`echo pwned > "$1/direct-$3"; echo pwned > "$2/via-$3"; true`, "sh", n.out, n.proj, strconv.Itoa(i))
		stderr := strings.TrimSpace(res.stderr)
		if res.code != 0 && !seen[stderr] {
			seen[stderr] = true
			t.Logf("launch %d failed closed: %s", i, stderr)
		}
		switch {
		case res.code == 0:
			outcomes["ran"]++
		case res.code == 1 && strings.HasPrefix(stderr, "error building bubblewrap command: Fatal error: cannot enforce sandbox writable root "+n.proj):
			outcomes["refused"]++
		case res.code == 1 && strings.HasPrefix(stderr, "error building bubblewrap command: "):
			outcomes["build failed closed"]++ // e.g. a protected name vanished between two checks
		case res.code == 1 && strings.HasPrefix(stderr, "bwrap: "):
			outcomes["bwrap failed closed"]++ // e.g. "Race condition binding dirfd", or a vanished mount point
		default:
			close(stop)
			wg.Wait()
			t.Fatalf("launch %d: exit %d stderr %q", i, res.code, res.stderr)
		}
	}
	close(stop)
	wg.Wait()
	t.Logf("%d flips; outcomes %v", flips, outcomes)
	wantOutEmpty(t, n.out)
}

// The degraded Landlock backend takes its writable-root rules from the same walk:
// after the swap the second launch is refused instead of getting a rule on OUT.
// (Protected names are covered by write entries, so Landlock can express the policy.)
func TestDegraded_NestedRootSwappedForSymlink(t *testing.T) {
	l := sandboxtest.Launcher(t, sandbox.BackendLandlock)
	n := newNestedRoots(t)
	entries := []string{entryJSON(specialJSON("root"), "read"), entryJSON(pathJSON(n.a), "write"), entryJSON(pathJSON(n.proj), "write")}
	for _, name := range policy.ProtectedMetadataNames {
		entries = append(entries, entryJSON(pathJSON(filepath.Join(n.a, name)), "write"))
	}
	ctx := managedCtx("restricted", entries...)
	res := runSandboxed(t, l, ctx, n.a, baseEnv(), "sh", "-c", `mv x x.old && mkdir x && ln -s "$1" x/proj`, "sh", n.out)
	if res.cmd.Backend != sandbox.BackendLandlock || res.code != 0 {
		t.Fatalf("first launch (the swap): backend %q exit %d stderr %q", res.cmd.Backend, res.code, res.stderr)
	}
	res = runSandboxed(t, l, ctx, n.a, baseEnv(), "sh", "-c", `echo pwned > "$1/direct"; echo pwned > x/proj/via; true`, "sh", n.out)
	wantOutEmpty(t, n.out)
	want := "Fatal error: cannot enforce sandbox writable root " + n.proj + " because it crosses writable symlink " + n.proj
	if res.code != 1 || strings.TrimSpace(res.stderr) != want {
		t.Fatalf("second launch: exit %d stderr %q, want exit 1 %q", res.code, res.stderr, want)
	}
}

// BenchmarkSandboxedTrueNestedRoot measures a one-shot sandboxed /bin/true with a
// writable root nested in another (codex workspace-write with the project under a
// writable /tmp): the project is bound by descriptor, so the launch goes through the
// launcher stage (it did before too, for the protected-name mask targets).
func BenchmarkSandboxedTrueNestedRoot(b *testing.B) {
	r := sandboxtest.Report("")
	if r.Backend != sandbox.BackendBubblewrap {
		b.Skip("bubblewrap unavailable")
	}
	l := sandbox.NewLauncher(r, nil)
	a := b.TempDir()
	proj := filepath.Join(a, "x", "proj")
	if err := os.MkdirAll(proj, 0o755); err != nil {
		b.Fatal(err)
	}
	t := &testing.T{}
	ctx := managedCtx("restricted", entryJSON(specialJSON("root"), "read"), entryJSON(pathJSON(a), "write"), entryJSON(pathJSON(proj), "write"))
	p, err := policy.Resolve(sandboxtest.Context(t, ctx), &policy.ResolveOptions{CommandCwd: "/"})
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if res := runPolicyB(b, l, p); res != 0 {
			b.Fatalf("exit %d", res)
		}
	}
}

// The codex CLI's workspace-write profile for a project under /tmp (slash_tmp and
// project_roots writable, the project's metadata read-only): /tmp and the project
// are nested writable roots without symlinks, and keep working.
func TestBubblewrap_CodexWorkspaceWriteUnderTmp(t *testing.T) {
	l := sandbox.NewLauncher(sandboxtest.Require(t, sandbox.BackendBubblewrap), nil)
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(base, "/tmp/") {
		t.Fatalf("test directory %s is not under /tmp", base)
	}
	proj := filepath.Join(base, "work", "proj")
	gitWorkTree(t, proj)
	skipRead := func(sub string) string {
		return `{"path":{"type":"special","value":{"kind":"project_roots","subpath":"` + sub + `"}},"access":"read","missing_path_behavior":"skip"}`
	}
	ctx := `{"permissions":{"type":"managed","network":"restricted","file_system":{"type":"restricted","entries":[` +
		entryJSON(specialJSON("root"), "read") + `,` + entryJSON(specialJSON("project_roots"), "write") + `,` +
		entryJSON(specialJSON("slash_tmp"), "write") + `,` + entryJSON(specialJSON("tmpdir"), "write") + `,` +
		skipRead(".git") + `,` + skipRead(".agents") + `,` + skipRead(".codex") + `]}},"cwd":"` + fileURI(proj) +
		`","workspaceRoots":["` + fileURI(proj) + `"],"windowsSandboxLevel":"disabled"}`
	res := runSandboxed(t, l, ctx, proj, baseEnv(), "sh", "-c",
		`echo ok > f && echo ok > ../sibling && if echo x > .git/HEAD 2>/dev/null; then echo git-writable; fi`)
	if res.code != 0 || strings.TrimSpace(res.stdout) != "" {
		t.Fatalf("got exit %d stdout %q stderr %q, want a clean run", res.code, res.stdout, res.stderr)
	}
	for _, f := range []string{filepath.Join(proj, "f"), filepath.Join(base, "work", "sibling")} {
		if _, err := os.Stat(f); err != nil {
			t.Errorf("write did not land: %v", err)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(proj, ".git", "HEAD")); string(b) != "ref\n" {
		t.Errorf(".git/HEAD changed to %q", b)
	}
}
