package sandbox

import (
	"errors"
	"fmt"
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
	fd, err := openBeneath(wt, target, false)
	if err != nil {
		var sym *errSymlinkComponent
		if errors.As(err, &sym) {
			kind := "read-only"
			if acc == policy.AccessDeny {
				kind = "deny-read"
			}
			return fatalf("cannot enforce sandbox %s path %s because it crosses writable symlink %s", kind, target, sym.path)
		}
		return fatalf("opening sandbox read-only path %s: %v", target, err)
	}
	b.plan.dataFDs = append(b.plan.dataFDs, fd)
	b.add("--ro-bind-fd", strconv.Itoa(fd), target)
	return nil
}

// openBeneath opens target, which must lie at or below dir, by walking from dir one
// component at a time with O_PATH|O_NOFOLLOW; a symlink component fails with
// *errSymlinkComponent. The returned descriptor has O_CLOEXEC only if cloexec.
func openBeneath(dir, target string, cloexec bool) (int, error) {
	rel := strings.TrimPrefix(target, dir)
	if rel == target && target != dir {
		return -1, fmt.Errorf("%s is not below %s", target, dir)
	}
	cur, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
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
	if !cloexec && rel == "" {
		// dir itself: reopen without O_CLOEXEC for bwrap.
		fd, err := unix.Openat(cur, ".", unix.O_PATH|unix.O_DIRECTORY, 0)
		unix.Close(cur)
		return fd, err
	}
	return cur, nil
}
