package sandbox

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/execlab/executor/sandbox/policy"
)

// A read-only carve-out below a writable root is bound by descriptor when bwrap has
// --ro-bind-fd: the descriptor is the carve-out's inode, opened without O_CLOEXEC for
// bwrap; a dry plan names fd -1; without the feature the carve-out is bound by path.
func TestBuildMounts_CarveOutByDescriptor(t *testing.T) {
	w := t.TempDir()
	ro := filepath.Join(w, "a", "ro")
	if err := os.MkdirAll(ro, 0o755); err != nil {
		t.Fatal(err)
	}
	p := &policy.Policy{Restricted: true, Cwd: "/", Entries: []policy.ResolvedEntry{
		{Path: "/", Access: policy.AccessRead}, {Path: w, Access: policy.AccessWrite}, {Path: ro, Access: policy.AccessRead},
		{Path: filepath.Join(w, ".git"), Access: policy.AccessWrite}, {Path: filepath.Join(w, ".agents"), Access: policy.AccessWrite},
		{Path: filepath.Join(w, ".codex"), Access: policy.AccessWrite}}}

	argAfter := func(args []string, flag, dest string) (string, bool) {
		for i := 0; i+2 < len(args); i++ {
			if args[i] == flag && args[i+2] == dest {
				return args[i+1], true
			}
		}
		return "", false
	}

	mp, err := buildMounts(p, "", mountOptions{roBindFD: true})
	if err != nil {
		t.Fatal(err)
	}
	fdText, ok := argAfter(mp.args, "--ro-bind-fd", ro)
	if !ok {
		t.Fatalf("args %q: want --ro-bind-fd N %s", mp.args, ro)
	}
	fd, _ := strconv.Atoi(fdText)
	defer func() {
		for _, fd := range mp.dataFDs {
			unix.Close(fd)
		}
	}()
	wantBoundFD(t, fd, ro, "carve-out's")
	// The directory between the root and the carve-out is self-bound by descriptor
	// too: bound by path, a swap for a symlink racing the launch would bind the
	// symlink's target writable.
	anc := filepath.Join(w, "a")
	ancText, ok := argAfter(mp.args, "--bind-fd", anc)
	if !ok {
		t.Fatalf("args %q: want --bind-fd N %s", mp.args, anc)
	}
	ancFD, _ := strconv.Atoi(ancText)
	wantInode(t, ancFD, anc, "ancestor's")

	dry, err := buildMounts(p, "", mountOptions{roBindFD: true, dry: true})
	if err != nil {
		t.Fatal(err)
	}
	v, ok := argAfter(dry.args, "--ro-bind-fd", ro)
	va, oka := argAfter(dry.args, "--bind-fd", anc)
	if !ok || v != "-1" || !oka || va != "-1" || len(dry.dataFDs) != 2 {
		t.Errorf("dry plan args %q fds %v: want --bind-fd -1 %s, --ro-bind-fd -1 %s and two placeholders", dry.args, dry.dataFDs, anc, ro)
	}
	plain, err := buildMounts(p, "", mountOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_, ok = argAfter(plain.args, "--ro-bind", ro)
	_, oka = argAfter(plain.args, "--bind", anc)
	if !ok || !oka || len(plain.dataFDs) != 0 {
		t.Errorf("args without the feature %q: want --bind %s %s and --ro-bind %s %s", plain.args, anc, anc, ro, ro)
	}
}

// openBeneath refuses a symlink at any component, even one that appeared after the
// path was checked, and refuses a target outside the directory it starts from.
func TestOpenBeneath(t *testing.T) {
	w := t.TempDir()
	outside := t.TempDir()
	if err := os.MkdirAll(filepath.Join(w, "d", "e"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(w, "link")); err != nil {
		t.Fatal(err)
	}
	fd, err := openBeneath(w, filepath.Join(w, "d", "e"), true)
	if err != nil {
		t.Fatalf("plain path: %v", err)
	}
	unix.Close(fd)
	for _, target := range []string{filepath.Join(w, "link"), filepath.Join(w, "link", "x")} {
		_, err := openBeneath(w, target, true)
		var sym *errSymlinkComponent
		if !errors.As(err, &sym) || sym.path != filepath.Join(w, "link") {
			t.Errorf("openBeneath(%s): got %v, want a symlink error at %s", target, err, filepath.Join(w, "link"))
		}
	}
	if _, err := openBeneath(w, outside, true); err == nil {
		t.Errorf("openBeneath outside the directory: got nil error")
	}
}

// wantBoundFD checks a descriptor the mount plan hands bwrap: it is path's inode (what
// names path in the message) and bwrap inherits it (no FD_CLOEXEC).
func wantBoundFD(t *testing.T, fd int, path, what string) {
	t.Helper()
	wantInode(t, fd, path, what)
	if flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); err != nil || flags&unix.FD_CLOEXEC != 0 {
		t.Errorf("descriptor flags %#x, %v: want it inherited by bwrap (no FD_CLOEXEC)", flags, err)
	}
}

// wantInode checks that descriptor fd is path's inode; what names path in the message.
func wantInode(t *testing.T, fd int, path, what string) {
	t.Helper()
	var got, want unix.Stat_t
	if err := unix.Fstat(fd, &got); err != nil {
		t.Fatalf("fstat of descriptor %d: %v", fd, err)
	}
	if err := unix.Stat(path, &want); err != nil {
		t.Fatal(err)
	}
	if got.Dev != want.Dev || got.Ino != want.Ino {
		t.Errorf("descriptor %d is inode %d:%d, want the %s %d:%d", fd, got.Dev, got.Ino, what, want.Dev, want.Ino)
	}
}
