package sandbox

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/execlab/executor/sandbox/policy"
)

// Reference argv (observed from codex 0.171.0 and 0.169.0, identical, system bwrap
// 0.8.0, /tmp/codex-daemon-0 present, workspace root $W with a non-empty .git, a
// sandboxed `sleep 5` started by process/start with the profiles the codex CLI sends):
//
//	read-only (root=read, network restricted), TMPDIR set or not:
//	  --ro-bind / / --dev /dev --perms 000 --tmpfs /tmp/codex-daemon-0
//	  --remount-ro /tmp/codex-daemon-0 --unshare-user --unshare-pid --unshare-ipc
//	  --unshare-net --proc /proc --cap-drop ALL
//	workspace-write (root=read, project_roots/slash_tmp/tmpdir=write, project_roots
//	.git/.agents/.codex=read skip), request TMPDIR unset:
//	  --ro-bind / / --dev /dev --perms 000 --tmpfs /tmp/codex-daemon-0
//	  --remount-ro /tmp/codex-daemon-0 --bind /tmp /tmp --perms 000 --tmpfs
//	  /tmp/codex-daemon-0 --remount-ro /tmp/codex-daemon-0 --perms 555 --tmpfs /tmp/.git
//	  --remount-ro /tmp/.git (likewise .agents, .codex, .aws) --ro-bind
//	  /tmp/codex-bwrap-synthetic-mount-targets-0 (same) --bind $W $W --ro-bind $W/.git
//	  $W/.git --perms 555 --tmpfs $W/.agents --remount-ro $W/.agents (likewise .codex,
//	  .aws) --unshare-user --unshare-pid --unshare-ipc --unshare-net --proc /proc
//	  --cap-drop ALL
//	workspace-write, request TMPDIR=$T: as above without the /tmp registry re-bind, then
//	  --bind $T $T, the four $T masks and --ro-bind $T/codex-bwrap-synthetic-mount-
//	  targets-0 (same) last
//	workspace-write, network enabled: the same mounts, no --unshare-net
//	minimal=read + slash_tmp=write (0.171.0): --tmpfs / --dev /dev, the read roots
//	  sorted with --ro-bind /tmp /tmp followed by the daemon mask, then --bind /tmp /tmp
//	  followed by the daemon mask again, the four /tmp masks, the registry re-bind
//	root=read + /tmp=deny (0.171.0): ... --perms 000 --tmpfs /tmp/codex-daemon-0
//	  --remount-ro /tmp/codex-daemon-0 --perms 000 --tmpfs /tmp --remount-ro /tmp
//
// Every leaf mask is remounted read-only right after its tmpfs; the order of sibling
// masks varies between runs (here $W/.aws came first in some), so argv order is not
// compared textually. For the six workspace-write and read-only runs above ours emits
// the same daemon-directory sequence and the same multiset of mounts (--ro-bind-fd
// counted as --ro-bind; checked against both releases), and deliberately differs in:
// mounts are ordered by destination depth (at one depth: writable, read-only, masks),
// so the registry re-bind comes before the masks of its root, not after them, and
// $T's mounts interleave with $W's; under a tmpfs root a writable root is bound once,
// not also read-only first; an existing $W/.git is bound by descriptor (--ro-bind-fd)
// when bwrap has it; a tmpfs mask with mounts inside it (deny directory with a
// writable root below) is remounted after those mounts; nothing is mounted inside the
// daemon directory; the directories between a writable root and a carve-out are
// self-bound (spec §3.6 step 3).

// ensureDaemonDir makes /tmp/codex-daemon-<euid> exist for the test (mode 0700) and
// removes it afterwards only if the test created it.
func ensureDaemonDir(t *testing.T) string {
	t.Helper()
	d := daemonDirPrefix + strconv.Itoa(os.Geteuid())
	switch err := os.Mkdir(d, 0o700); {
	case err == nil:
		t.Cleanup(func() { os.Remove(d) })
	case errors.Is(err, fs.ErrExist):
		if fi, err := os.Lstat(d); err != nil || !fi.IsDir() {
			t.Fatalf("%s exists but is not a directory (%v)", d, err)
		}
	default:
		t.Fatalf("creating %s: %v", d, err)
	}
	return d
}

// simMount is one mount in simulateMounts' table.
type simMount struct {
	dest string
	kind string // "tmpfs", "bind", "ro", "data", "dev"
	ro   bool   // a tmpfs remounted read-only
}

// simulateMounts replays bwrap mount arguments the way bwrap applies them (each mount
// covers everything mounted earlier at or below its destination) and returns the
// final table. A --remount-ro whose destination's topmost mount is not a tmpfs mounted
// exactly there is an error: bwrap fails it with EINVAL (issue 12).
func simulateMounts(args []string) ([]simMount, error) {
	var tab []simMount
	top := func(p string) int {
		for i := len(tab) - 1; i >= 0; i-- {
			if policy.IsWithin(p, tab[i].dest) {
				return i
			}
		}
		return -1
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch a {
		case "--perms":
			i++
		case "--tmpfs":
			tab = append(tab, simMount{dest: args[i+1], kind: "tmpfs"})
			i++
		case "--dev":
			tab = append(tab, simMount{dest: args[i+1], kind: "dev"})
			i++
		case "--bind", "--bind-fd":
			tab = append(tab, simMount{dest: args[i+2], kind: "bind"})
			i += 2
		case "--ro-bind", "--ro-bind-fd":
			tab = append(tab, simMount{dest: args[i+2], kind: "ro"})
			i += 2
		case "--ro-bind-data":
			tab = append(tab, simMount{dest: args[i+2], kind: "data"})
			i += 2
		case "--remount-ro":
			p := args[i+1]
			j := top(p)
			if j < 0 || tab[j].dest != p || tab[j].kind != "tmpfs" {
				got := "nothing"
				if j >= 0 {
					got = tab[j].kind + " at " + tab[j].dest
				}
				return nil, errors.New("--remount-ro " + p + " would remount " + got)
			}
			tab[j].ro = true
			i++
		default:
			return nil, errors.New("unexpected argument " + a)
		}
	}
	return tab, nil
}

// viewOf is what the sandbox shows at p in the final table: "rw" (host, writable), "ro"
// (host, read-only), "masked" (an empty read-only tmpfs or file mask, or inside a
// tmpfs), "tmpfs-rw" (a mask never made read-only), "dev".
func viewOf(tab []simMount, p string) string {
	for i := len(tab) - 1; i >= 0; i-- {
		m := tab[i]
		if !policy.IsWithin(p, m.dest) {
			continue
		}
		switch m.kind {
		case "bind":
			return "rw"
		case "ro":
			return "ro"
		case "data":
			return "masked"
		case "dev":
			return "dev"
		}
		if m.dest == "/" || m.ro || m.dest != p {
			return "masked" // a tmpfs root or the inside of a mask: not host content
		}
		return "tmpfs-rw"
	}
	return "none"
}

func mkdirs(t *testing.T, dirs ...string) {
	t.Helper()
	for _, d := range dirs {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
}

func writeFiles(t *testing.T, files ...string) {
	t.Helper()
	for _, f := range files {
		if err := os.WriteFile(f, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// Whatever the launcher hides or makes read-only stays hidden or read-only after
// every later mount that covers it, and every --remount-ro targets its own tmpfs
// (spec/sandbox.md §2.7, §3.6; issue 12). Each row is a policy shape whose final
// mount view is checked path by path.
func TestBuildMounts_MasksSurviveLaterBinds(t *testing.T) {
	daemon := ensureDaemonDir(t)
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if !policy.IsWithin(base, "/tmp") {
		t.Skipf("test directory %s is not under /tmp", base)
	}
	j := func(rel ...string) string { return filepath.Join(append([]string{base}, rel...)...) }
	e := func(p string, a policy.Access) policy.ResolvedEntry { return policy.ResolvedEntry{Path: p, Access: a} }
	skip := func(p string) policy.ResolvedEntry {
		return policy.ResolvedEntry{Path: p, Access: policy.AccessRead, SkipIfMissing: true}
	}
	const r, w, d = policy.AccessRead, policy.AccessWrite, policy.AccessDeny

	mkdirs(t, j("ws", ".git", "objects"), j("nested", "sub"), j("deny", "a", "b"), j("deny", "a", "x"),
		j("ro", "r", "d"), j("sym", "x", "y", "z", "t"), j("reg", "real", "codex-bwrap-synthetic-mount-targets-0"),
		j("anc", "a", "b", "c"), j("tmpd"))
	writeFiles(t, j("ws", ".git", "HEAD"), j("deny", "a", "secret"), j("ro", "r", "f"), j("anc", "a", "b", "c", "f"))
	if err := os.Symlink(j("sym", "x", "y", "z", "t"), j("sym", "l")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(j("reg", "real"), j("reg", "l")); err != nil {
		t.Fatal(err)
	}
	mkdirs(t, j("sym", "x", "y", "z", "t", ".git"))
	writeFiles(t, j("sym", "x", "y", "z", "t", ".git", "HEAD"))
	slashTmpRegistry := registryPathFor("")

	ww := func(root string, more ...policy.ResolvedEntry) []policy.ResolvedEntry {
		return append([]policy.ResolvedEntry{e("/", r), e(root, w), e("/tmp", w),
			skip(root + "/.git"), skip(root + "/.agents"), skip(root + "/.codex")}, more...)
	}
	tests := []struct {
		name     string
		entries  []policy.ResolvedEntry
		minimal  policy.Access
		registry string
		want     map[string]string
	}{
		{"read-only", []policy.ResolvedEntry{e("/", r)}, 0, "",
			map[string]string{daemon: "masked", "/tmp": "ro", j("ws"): "ro"}},
		{"workspace-write (writable /tmp)", ww(j("ws")), 0, slashTmpRegistry,
			map[string]string{daemon: "masked", daemon + "/x": "masked", "/tmp": "rw", j("ws"): "rw",
				j("ws", ".git"): "ro", j("ws", ".codex"): "masked", "/tmp/.codex": "masked", slashTmpRegistry: "ro"}},
		// (With /tmp writable too, reg/l would be a symlink inside a writable root:
		// refused, TestBuildMounts_NestedWritableRoots.)
		{"workspace-write, registry under a symlinked TMPDIR", []policy.ResolvedEntry{e("/", r), e(j("ws"), w), e(j("reg", "l"), w)}, 0, j("reg", "l", "codex-bwrap-synthetic-mount-targets-0"),
			map[string]string{daemon: "masked", j("reg", "real"): "rw", j("reg", "real", "codex-bwrap-synthetic-mount-targets-0"): "ro"}},
		{"denied /tmp", []policy.ResolvedEntry{e("/", r), e("/tmp", d)}, 0, slashTmpRegistry,
			map[string]string{daemon: "masked", "/tmp": "masked", slashTmpRegistry: "masked"}},
		{"tmpfs root, /tmp writable", []policy.ResolvedEntry{e("/tmp", w)}, r, slashTmpRegistry,
			map[string]string{daemon: "masked", "/tmp": "rw", "/usr": "ro", "/home": "masked", slashTmpRegistry: "ro"}},
		{"tmpfs root, /tmp readable", []policy.ResolvedEntry{e("/tmp", r)}, r, "",
			map[string]string{daemon: "masked", "/tmp": "ro"}},
		{"writable root inside the daemon directory", []policy.ResolvedEntry{e("/", r), e("/tmp", w), e(daemon+"/x", w)}, 0, "",
			map[string]string{daemon: "masked", daemon + "/x": "masked", "/tmp": "rw"}},
		{"nested writable roots", []policy.ResolvedEntry{e("/", r), e(j("nested"), w), e(j("nested", "sub"), w)}, 0, "",
			map[string]string{j("nested"): "rw", j("nested", "sub"): "rw", j("nested", ".git"): "masked",
				j("nested", "sub", ".git"): "masked", j("nested", "sub", ".codex"): "masked"}},
		{"writable root below a deny directory", []policy.ResolvedEntry{e("/", r), e(j("deny"), w), e(j("deny", "a"), d), e(j("deny", "a", "b"), w)}, 0, "",
			map[string]string{j("deny", "a"): "masked", j("deny", "a", "secret"): "masked", j("deny", "a", "x"): "masked",
				j("deny", "a", "b"): "rw", j("deny", "a", "b", ".git"): "masked", j("deny"): "rw"}},
		{"writable root below a read-only carve-out", []policy.ResolvedEntry{e("/", r), e(j("ro"), w), e(j("ro", "r"), r), e(j("ro", "r", "d"), w)}, 0, "",
			map[string]string{j("ro", "r"): "ro", j("ro", "r", "f"): "ro", j("ro", "r", "d"): "rw",
				j("ro", "r", "d", ".codex"): "masked", j("ro", ".git"): "masked"}},
		{"symlinked writable root inside a deeper writable root", []policy.ResolvedEntry{e("/", r), e(j("sym", "l"), w), e(j("sym", "x", "y", "z"), w)}, 0, "",
			map[string]string{j("sym", "x", "y", "z", "t", ".git"): "ro", j("sym", "x", "y", "z", "t", ".codex"): "masked",
				j("sym", "x", "y", "z", "t"): "rw", j("sym", "x", "y", "z", ".git"): "masked"}},
		{"carve-out ancestors under a writable /tmp", []policy.ResolvedEntry{e("/", r), e("/tmp", w), e(j("anc", "a", "b", "c"), r)}, 0, "",
			map[string]string{daemon: "masked", j("anc", "a", "b", "c"): "ro", j("anc", "a", "b", "c", "f"): "ro", j("anc", "a"): "rw"}},
		{"carve-out below a writable root /", []policy.ResolvedEntry{e("/", w), e(j("anc", "a", "b", "c"), r)}, 0, "",
			map[string]string{daemon: "masked", "/tmp": "rw", j("anc", "a", "b", "c"): "ro", j("anc", "a", "b", "c", "f"): "ro",
				j("anc", "a", "b"): "rw", "/.codex": "masked"}},
		{"registry created before the first launch", []policy.ResolvedEntry{e("/", r), e(j("tmpd"), w)}, 0, j("tmpd", "codex-bwrap-synthetic-mount-targets-0"),
			map[string]string{j("tmpd"): "rw", j("tmpd", "codex-bwrap-synthetic-mount-targets-0"): "ro"}},
		{"deny glob inside the daemon directory", []policy.ResolvedEntry{e("/", r), e("/tmp", w)}, 0, "",
			map[string]string{daemon: "masked", "/tmp": "rw"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &policy.Policy{Restricted: true, Cwd: "/", Entries: tt.entries, Minimal: tt.minimal}
			if strings.HasPrefix(tt.name, "deny glob") {
				p.DenyGlobs = []string{daemon + "/*"}
				writeFiles(t, daemon+"/executor-test-glob-"+strconv.Itoa(os.Getpid()))
				defer os.Remove(daemon + "/executor-test-glob-" + strconv.Itoa(os.Getpid()))
			}
			for _, fd := range []bool{false, true} {
				mp, err := buildMounts(p, tt.registry, mountOptions{dry: true, roBindFD: fd})
				if err != nil {
					t.Fatalf("buildMounts: %v", err)
				}
				tab, err := simulateMounts(mp.args)
				if err != nil {
					t.Fatalf("roBindFD=%v: %v\nargs %q", fd, err, mp.args)
				}
				for path, want := range tt.want {
					if got := viewOf(tab, path); got != want {
						t.Errorf("roBindFD=%v: %s: got %s, want %s\nargs %q", fd, path, got, want, mp.args)
					}
				}
				for i, a := range mp.args {
					if a != daemon && strings.HasPrefix(a, daemon+"/") && i > 0 && mp.args[i-1] != "--remount-ro" {
						t.Errorf("roBindFD=%v: mount inside the daemon directory: %q", fd, mp.args[i-1:i+1])
					}
				}
				for _, ht := range mp.targets {
					if policy.IsWithin(ht.path, daemon) {
						t.Errorf("host mount target %s inside the daemon directory", ht.path)
					}
				}
			}
		})
	}
}
