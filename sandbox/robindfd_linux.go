package sandbox

import (
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/execlab/executor/sandbox/policy"
)

// Descriptor-backed read-only carve-outs (spec/sandbox.md §3.6: "SHOULD be
// --ro-bind-fd N P with an O_PATH|O_NOFOLLOW fd opened after validation").
//
// A read-only carve-out below a writable root is validated (no symlink on its path)
// before bwrap runs; bound by path, it could be swapped in between by anything that
// can write the root (another sandboxed command, the user). Bound by descriptor, the
// mount is the inode the launcher resolved: the descriptor comes from a walk from the
// writable root's target that opens every component O_PATH|O_NOFOLLOW and refuses a
// symlink at any of them.

// errSymlinkComponent is a symlink met by openBeneath at the path it carries.
type errSymlinkComponent struct{ path string }

func (e *errSymlinkComponent) Error() string { return "symlink at " + e.path }

// roBindCarveOut emits --ro-bind-fd for the existing carve-out target below the
// writable root target wt (the descriptor stays open, without O_CLOEXEC, for bwrap).
func (b *mountBuilder) roBindCarveOut(wt, target string, acc policy.Access) error {
	if b.dry {
		b.plan.dataFDs = append(b.plan.dataFDs, -1)
		b.add("--ro-bind-fd", "-1", target)
		return nil
	}
	fd, err := b.openBelow(wt, target, false)
	if err != nil {
		var sym *errSymlinkComponent
		if errors.As(err, &sym) {
			return fatalf("cannot enforce sandbox %s path %s because it crosses writable symlink %s", carveKind(acc), target, sym.path)
		}
		return fatalf("opening sandbox read-only path %s: %v", target, err)
	}
	b.plan.dataFDs = append(b.plan.dataFDs, fd)
	b.add("--ro-bind-fd", strconv.Itoa(fd), target)
	return nil
}

// resolveRoot returns writable root w's canonical target. Outside fullWrite it walks
// the path (nested_linux.go) and keeps the descriptor of a root nested in another.
func (b *mountBuilder) resolveRoot(w string) (string, error) {
	if b.fullWrite { // everything is writable anyway: resolved as the reference does
		t, err := filepath.EvalSymlinks(w)
		if err != nil {
			return "", errRootMissing
		}
		return t, nil
	}
	r, err := resolveWritableRoot(b.ents, w)
	if err != nil {
		return "", err
	}
	if !r.nested {
		unix.Close(r.fd)
		return r.target, nil
	}
	if old, ok := b.rootFD[r.target]; ok {
		unix.Close(old)
	}
	b.rootFD[r.target] = r.fd
	return r.target, nil
}

// bindWritable binds writable root target t: by the descriptor of its walk when t is
// nested in another writable root and bwrap has --bind-fd, else by path (a nested
// root bound by path was checked symlink-free just now; only a swap racing the launch
// could redirect it, with a bwrap that predates --bind-fd).
func (b *mountBuilder) bindWritable(t string) error {
	fd, nested := b.rootFD[t]
	if nested {
		if err := b.pinNestedAncestors(t); err != nil {
			return err
		}
	}
	switch {
	case !nested || !b.roBindFD:
		b.add("--bind", t, t)
		return nil
	case b.dry:
		b.plan.dataFDs = append(b.plan.dataFDs, -1)
		b.add("--bind-fd", "-1", t)
		return nil
	}
	dup, err := dupForBwrap(fd)
	if err != nil {
		return fatalf("opening sandbox writable root %s: %v", t, err)
	}
	b.plan.dataFDs = append(b.plan.dataFDs, dup)
	b.add("--bind-fd", strconv.Itoa(dup), t)
	return nil
}

// bindDirFD self-binds directory dir, an ancestor of carve-out carveOut (acc read or
// deny; bindAncestors) or of nested writable root carveOut (acc write;
// pinNestedAncestors) below writable root target wt: by a descriptor from a
// symlink-refusing walk when bwrap has --bind-fd.
func (b *mountBuilder) bindDirFD(wt, dir, carveOut string, acc policy.Access) error {
	switch {
	case !b.roBindFD:
		b.add("--bind", dir, dir)
		return nil
	case b.dry:
		b.plan.dataFDs = append(b.plan.dataFDs, -1)
		b.add("--bind-fd", "-1", dir)
		return nil
	}
	fd, err := b.openBelow(wt, dir, false)
	if err != nil {
		var sym *errSymlinkComponent
		switch {
		case errors.As(err, &sym) && acc == policy.AccessWrite:
			return fatalf("cannot enforce sandbox writable root %s because it crosses writable symlink %s", carveOut, sym.path)
		case errors.As(err, &sym):
			return fatalf("cannot enforce sandbox %s path %s because it crosses writable symlink %s", carveKind(acc), carveOut, sym.path)
		}
		return fatalf("opening sandbox directory %s: %v", dir, err)
	}
	b.plan.dataFDs = append(b.plan.dataFDs, fd)
	b.add("--bind-fd", strconv.Itoa(fd), dir)
	return nil
}

// carveKind names a read-only or deny-read carve-out in the writable-symlink refusal.
func carveKind(acc policy.Access) string {
	if acc == policy.AccessDeny {
		return "deny-read"
	}
	return "read-only"
}

// openBelow is openBeneath from writable root target dir, starting from the
// descriptor of its walk when it is a nested root (so a swap of its path after the
// walk cannot redirect the carve-out).
func (b *mountBuilder) openBelow(dir, target string, cloexec bool) (int, error) {
	start := -1
	if fd, ok := b.rootFD[dir]; ok {
		start = fd
	}
	return openBeneathFrom(start, dir, target, cloexec)
}

// openBeneath opens target, which must lie at or below dir, by walking from dir one
// component at a time with O_PATH|O_NOFOLLOW; a symlink component fails with
// *errSymlinkComponent. The returned descriptor has O_CLOEXEC only if cloexec.
func openBeneath(dir, target string, cloexec bool) (int, error) {
	return openBeneathFrom(-1, dir, target, cloexec)
}

// openBeneathFrom is openBeneath starting from descriptor start of dir instead of
// opening dir by path (start < 0: by path).
func openBeneathFrom(start int, dir, target string, cloexec bool) (int, error) {
	rel := strings.TrimPrefix(target, dir)
	if rel == target && target != dir {
		return -1, fmt.Errorf("%s is not below %s", target, dir)
	}
	var cur int
	var err error
	if start >= 0 {
		cur, err = unix.FcntlInt(uintptr(start), unix.F_DUPFD_CLOEXEC, 0)
	} else {
		cur, err = unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	}
	if err != nil {
		return -1, err
	}
	at := dir
	segs := strings.Split(strings.Trim(rel, "/"), "/")
	for i, seg := range segs {
		if seg == "" {
			continue
		}
		if seg == "." || seg == ".." {
			unix.Close(cur)
			return -1, fmt.Errorf("%s has a %q component", target, seg)
		}
		flags := unix.O_PATH | unix.O_NOFOLLOW
		if i < len(segs)-1 || cloexec {
			flags |= unix.O_CLOEXEC
		}
		next, err := unix.Openat(cur, seg, flags, 0)
		unix.Close(cur)
		if err != nil {
			return -1, err
		}
		at += "/" + seg
		var st unix.Stat_t
		if err := unix.Fstat(next, &st); err != nil {
			unix.Close(next)
			return -1, err
		}
		if st.Mode&unix.S_IFMT == unix.S_IFLNK {
			unix.Close(next)
			return -1, &errSymlinkComponent{path: at}
		}
		cur = next
	}
	if !cloexec && strings.Trim(rel, "/") == "" {
		// dir itself: a copy without O_CLOEXEC for bwrap.
		fd, err := dupForBwrap(cur)
		unix.Close(cur)
		return fd, err
	}
	return cur, nil
}
