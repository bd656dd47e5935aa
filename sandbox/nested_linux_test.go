package sandbox

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/execlab/executor/sandbox/policy"
)

// nestedFixture is A (writable), A/x/proj (writable, nested in A) and OUT (outside
// every writable root), all canonical.
type nestedFixture struct{ a, proj, out string }

func newNestedFixture(t *testing.T) nestedFixture {
	t.Helper()
	a, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	out, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	f := nestedFixture{a: a, proj: filepath.Join(a, "x", "proj"), out: out}
	mkdirs(t, f.proj)
	return f
}

func (f nestedFixture) policy(more ...policy.ResolvedEntry) *policy.Policy {
	return &policy.Policy{Restricted: true, Cwd: "/", Entries: append([]policy.ResolvedEntry{
		{Path: "/", Access: policy.AccessRead}, {Path: f.a, Access: policy.AccessWrite},
		{Path: f.proj, Access: policy.AccessWrite}}, more...)}
}

// swap is the attack: the project's parent renamed away, the project replaced by a
// symlink to OUT.
func (f nestedFixture) swap(t *testing.T) {
	t.Helper()
	x := filepath.Dir(f.proj)
	if err := os.Rename(x, x+".old"); err != nil {
		t.Fatal(err)
	}
	mkdirs(t, x)
	if err := os.Symlink(f.out, f.proj); err != nil {
		t.Fatal(err)
	}
}

func argAfterFlag(args []string, flag, dest string) (string, bool) {
	for i := 0; i+2 < len(args); i++ {
		if args[i] == flag && args[i+2] == dest {
			return args[i+1], true
		}
	}
	return "", false
}

func closePlan(mp *mountPlan) {
	for _, fd := range mp.dataFDs {
		if fd >= 0 {
			unix.Close(fd)
		}
	}
}

// A writable root nested in another is bound by the descriptor of a walk that follows
// no symlink inside the enclosing root (--bind-fd; a placeholder in dry plans; by path
// without the bwrap feature). After the issue 26 swap the launch is refused and OUT is
// never a mount source.
func TestBuildMounts_NestedWritableRoots(t *testing.T) {
	f := newNestedFixture(t)
	p := f.policy()

	mp, err := buildMounts(p, "", mountOptions{roBindFD: true})
	if err != nil {
		t.Fatal(err)
	}
	defer closePlan(mp)
	fdText, ok := argAfterFlag(mp.args, "--bind-fd", f.proj)
	if !ok {
		t.Fatalf("args %q: want --bind-fd N %s", mp.args, f.proj)
	}
	if _, ok := argAfterFlag(mp.args, "--bind", f.a); !ok {
		t.Errorf("args %q: want the enclosing root bound by path (--bind %s %s)", mp.args, f.a, f.a)
	}
	// The directory between the enclosing root and the project is pinned (a mount
	// point in the sandbox, so a command there cannot rename it), by descriptor.
	x := filepath.Dir(f.proj)
	if xText, ok := argAfterFlag(mp.args, "--bind-fd", x); !ok {
		t.Errorf("args %q: want --bind-fd N %s", mp.args, x)
	} else {
		xfd, _ := strconv.Atoi(xText)
		wantInode(t, xfd, x, "pinned directory's")
	}
	fd, _ := strconv.Atoi(fdText)
	wantBoundFD(t, fd, f.proj, "project's")
	dry, err := buildMounts(p, "", mountOptions{roBindFD: true, dry: true})
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := argAfterFlag(dry.args, "--bind-fd", f.proj); !ok || v != "-1" {
		t.Errorf("dry plan args %q: want --bind-fd -1 %s (so the launch goes through the stage)", dry.args, f.proj)
	}
	if v, ok := argAfterFlag(dry.args, "--bind-fd", x); !ok || v != "-1" {
		t.Errorf("dry plan args %q: want --bind-fd -1 %s", dry.args, x)
	}
	plain, err := buildMounts(p, "", mountOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := argAfterFlag(plain.args, "--bind", f.proj); !ok {
		t.Errorf("args without the feature %q: want --bind %s %s", plain.args, f.proj, f.proj)
	}
	if _, ok := argAfterFlag(plain.args, "--bind", x); !ok {
		t.Errorf("args without the feature %q: want --bind %s %s", plain.args, x, x)
	}

	f.swap(t)
	wantMsg := "Fatal error: cannot enforce sandbox writable root " + f.proj + " because it crosses writable symlink " + f.proj
	for _, opts := range []mountOptions{{roBindFD: true}, {roBindFD: true, dry: true}, {}} {
		mp, err := buildMounts(p, "", opts)
		if err == nil {
			closePlan(mp)
			t.Fatalf("%+v after the swap: got args %q, want a refusal", opts, mp.args)
		}
		if err.Error() != wantMsg {
			t.Errorf("%+v after the swap: got %q, want %q", opts, err, wantMsg)
		}
	}
}

// Which symlinks a writable root may cross: the user's (in directories outside every
// other writable root) are followed as before; one in a directory inside another
// writable root, reached directly or through a user's symlink, refuses the launch.
func TestBuildMounts_NestedRootSymlinkRule(t *testing.T) {
	f := newNestedFixture(t)
	user := t.TempDir() // outside every writable root: the user's directory
	plainDir := filepath.Join(f.out, "real")
	mkdirs(t, plainDir, filepath.Join(f.a, "y", "t"))
	link := func(target, name string) string {
		t.Helper()
		if err := os.Symlink(target, name); err != nil {
			t.Fatal(err)
		}
		return name
	}
	userLink := link(plainDir, filepath.Join(user, "tolink"))                       // user's symlink to a plain directory
	intoA := link(filepath.Join(f.a, "y", "t"), filepath.Join(user, "intoA"))       // user's symlink into A
	evil := link(f.out, filepath.Join(f.a, "evil"))                                 // planted inside A
	viaEvil := link(filepath.Join(f.a, "evil", "real"), filepath.Join(user, "via")) // user's symlink through it
	relEvil := link("../"+filepath.Base(f.a)+"/evil", filepath.Join(user, "rel"))   // relative, same place

	e := func(p string, a policy.Access) policy.ResolvedEntry { return policy.ResolvedEntry{Path: p, Access: a} }
	const r, w = policy.AccessRead, policy.AccessWrite
	tests := []struct {
		name    string
		entries []policy.ResolvedEntry
		full    bool
		bindFD  string // want --bind-fd N at this destination ("" none)
		bind    string // want --bind P P at this destination ("" none)
		refuse  string // want this refusal ("" none)
	}{
		{"user's symlink outside every writable root", []policy.ResolvedEntry{e("/", r), e(f.a, w), e(userLink, w)}, false,
			"", plainDir, ""},
		{"user's symlink into another writable root", []policy.ResolvedEntry{e("/", r), e(f.a, w), e(intoA, w)}, false,
			filepath.Join(f.a, "y", "t"), f.a, ""},
		{"symlink planted inside another writable root", []policy.ResolvedEntry{e("/", r), e(f.a, w), e(filepath.Join(evil, "real"), w)}, false,
			"", "", "cannot enforce sandbox writable root " + filepath.Join(evil, "real") + " because it crosses writable symlink " + evil},
		{"user's symlink through a planted one", []policy.ResolvedEntry{e("/", r), e(f.a, w), e(viaEvil, w)}, false,
			"", "", "cannot enforce sandbox writable root " + viaEvil + " because it crosses writable symlink " + evil},
		{"relative user's symlink through a planted one", []policy.ResolvedEntry{e("/", r), e(f.a, w), e(filepath.Join(relEvil, "real"), w)}, false,
			"", "", "cannot enforce sandbox writable root " + filepath.Join(relEvil, "real") + " because it crosses writable symlink " + evil},
		{"symlinked root itself inside another writable root", []policy.ResolvedEntry{e("/", r), e(f.a, w), e(evil, w)}, false,
			"", "", "cannot enforce sandbox writable root " + evil + " because it crosses writable symlink " + evil},
		{"full write resolves as the reference", []policy.ResolvedEntry{e("/", w), e(f.a, w), e(filepath.Join(evil, "real"), w)}, true,
			"", plainDir, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &policy.Policy{Restricted: true, Cwd: "/", Entries: tt.entries}
			if p.FullWrite() != tt.full {
				t.Fatalf("FullWrite() = %v, want %v", p.FullWrite(), tt.full)
			}
			mp, err := buildMounts(p, "", mountOptions{roBindFD: true})
			if tt.refuse != "" {
				if err == nil {
					closePlan(mp)
					t.Fatalf("got args %q, want refusal %q", mp.args, tt.refuse)
				}
				if got := strings.TrimPrefix(err.Error(), "Fatal error: "); got != tt.refuse {
					t.Fatalf("got %q, want %q", got, tt.refuse)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer closePlan(mp)
			if tt.bindFD != "" {
				if _, ok := argAfterFlag(mp.args, "--bind-fd", tt.bindFD); !ok {
					t.Errorf("args %q: want --bind-fd N %s", mp.args, tt.bindFD)
				}
			}
			if tt.bind != "" {
				if v, ok := argAfterFlag(mp.args, "--bind", tt.bind); !ok || v != tt.bind {
					t.Errorf("args %q: want --bind %s %s", mp.args, tt.bind, tt.bind)
				}
			}
			for _, a := range mp.args {
				if a == f.out {
					t.Errorf("args %q mount OUT %s", mp.args, f.out)
				}
			}
		})
	}
}

// A carve-out below a nested root is opened from the root's walk descriptor: after
// the walk, the root's path no longer matters.
func TestBuildMounts_NestedRootCarveOutFromDescriptor(t *testing.T) {
	f := newNestedFixture(t)
	git := filepath.Join(f.proj, ".git")
	mkdirs(t, git)
	writeFiles(t, filepath.Join(git, "HEAD"))
	b := &mountBuilder{ents: []mountEntry{{path: "/", access: policy.AccessRead}, {path: f.a, access: policy.AccessWrite},
		{path: f.proj, access: policy.AccessWrite}}, rootFD: map[string]int{}}
	target, err := b.resolveRoot(f.proj)
	if err != nil || target != f.proj {
		t.Fatalf("resolveRoot: %q, %v", target, err)
	}
	defer unix.Close(b.rootFD[f.proj])
	var st unix.Stat_t
	if err := unix.Stat(git, &st); err != nil {
		t.Fatal(err)
	}
	f.swap(t) // the path now leads to OUT, which has no .git
	fd, err := b.openBelow(f.proj, git, true)
	if err != nil {
		t.Fatalf("openBelow after the swap: %v", err)
	}
	defer unix.Close(fd)
	var got unix.Stat_t
	if err := unix.Fstat(fd, &got); err != nil {
		t.Fatal(err)
	}
	if got.Dev != st.Dev || got.Ino != st.Ino {
		t.Errorf("carve-out descriptor is inode %d:%d, want the project's .git %d:%d", got.Dev, got.Ino, st.Dev, st.Ino)
	}
}

// Landlock rules for writable roots come from the same walk: the swap refuses the
// rule set instead of granting OUT.
func TestResolveWritableRoot_Landlock(t *testing.T) {
	f := newNestedFixture(t)
	ents := []mountEntry{{path: "/", access: policy.AccessRead}, {path: f.a, access: policy.AccessWrite},
		{path: f.proj, access: policy.AccessWrite}}
	r, err := resolveWritableRoot(ents, f.proj)
	if err != nil || !r.nested || r.target != f.proj {
		t.Fatalf("before the swap: %+v, %v; want %s, nested", r, err, f.proj)
	}
	unix.Close(r.fd)
	r, err = resolveWritableRoot(ents, f.a)
	if err != nil || r.nested || r.target != f.a {
		t.Fatalf("enclosing root: %+v, %v; want %s, not nested", r, err, f.a)
	}
	unix.Close(r.fd)
	f.swap(t)
	if _, err := resolveWritableRoot(ents, f.proj); err == nil || !strings.Contains(err.Error(), "crosses writable symlink "+f.proj) {
		t.Fatalf("after the swap: got %v, want a refusal", err)
	}
	if _, err := resolveWritableRoot(ents, filepath.Join(f.a, "missing")); !errors.Is(err, errRootMissing) {
		t.Fatalf("missing root: got %v, want errRootMissing", err)
	}
}

// Outside every writable region walkRoot resolves exactly as filepath.EvalSymlinks
// (absolute, relative and ".." symlinks, chains), and reports loops and missing paths
// as errors.
func TestWalkRoot_MatchesEvalSymlinks(t *testing.T) {
	d, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	j := func(rel ...string) string { return filepath.Join(append([]string{d}, rel...)...) }
	mkdirs(t, j("a", "b", "c"), j("z"))
	for _, l := range [][2]string{
		{j("a", "b", "c"), j("abs")},  // absolute
		{"a/b", j("rel")},             // relative
		{"../a/b/c", j("z", "up")},    // relative with ..
		{j("rel"), j("chain")},        // symlink to a symlink
		{"chain/c", j("chained")},     // relative through a chain
		{j("loop2"), j("loop1")},      // loop
		{j("loop1"), j("loop2")},      // loop
		{j("missing"), j("dangling")}, // dangling
	} {
		if err := os.Symlink(l[0], l[1]); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []string{j("abs"), j("rel", "c"), j("z", "up"), j("chain", "c"), j("chained"), j("a", "b", "..", "b")} {
		want, err := filepath.EvalSymlinks(p)
		if err != nil {
			t.Fatal(err)
		}
		r, err := walkRoot(p, nil)
		if err != nil {
			t.Errorf("walkRoot(%s): %v", p, err)
			continue
		}
		var got, st unix.Stat_t
		unix.Fstat(r.fd, &got)
		unix.Stat(want, &st)
		unix.Close(r.fd)
		if r.target != want || r.nested || got.Ino != st.Ino {
			t.Errorf("walkRoot(%s) = %q nested=%v ino %d, want %q ino %d", p, r.target, r.nested, got.Ino, want, st.Ino)
		}
	}
	for _, p := range []string{j("loop1"), j("dangling"), j("a", "nope")} {
		if r, err := walkRoot(p, nil); err == nil {
			unix.Close(r.fd)
			t.Errorf("walkRoot(%s) = %q, want an error", p, r.target)
		}
	}
}

// Host mount targets are created and removed only through symlink-free parents: a
// parent swapped for a symlink fails the creation and leaves the removal undone,
// instead of creating or deleting wherever the symlink points.
func TestMountTargets_NoSymlinkedParent(t *testing.T) {
	f := newNestedFixture(t)
	target := filepath.Join(f.proj, ".codex")
	created, id, err := createTarget(target, true)
	if err != nil || !created {
		t.Fatalf("createTarget: %v %v", created, err)
	}
	if created, _, err := createTarget(target, true); err != nil || created {
		t.Fatalf("createTarget again: created=%v %v, want existing", created, err)
	}
	mkdirs(t, filepath.Join(f.out, ".codex")) // what the symlink will lead to
	f.swap(t)
	removeTarget(target, id, true) // resolves to OUT/.codex: must be left alone
	if _, err := os.Stat(filepath.Join(f.out, ".codex")); err != nil {
		t.Fatalf("removeTarget through a symlinked parent removed %s: %v", filepath.Join(f.out, ".codex"), err)
	}
	if _, _, err := createTarget(filepath.Join(f.proj, ".agents"), false); err == nil {
		t.Fatal("createTarget through a symlinked parent succeeded")
	}
	if _, err := os.Lstat(filepath.Join(f.out, ".agents")); err == nil {
		t.Fatal("createTarget created a file in OUT")
	}
	// The real target, reached without symlinks, is still removed.
	realTarget := filepath.Join(filepath.Dir(f.proj)+".old", "proj", ".codex")
	removeTarget(realTarget, id, true)
	if _, err := os.Lstat(realTarget); err == nil {
		t.Fatal("removeTarget left the synthetic target behind")
	}
}
