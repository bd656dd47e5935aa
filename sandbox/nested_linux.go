package sandbox

// Writable roots whose path lies in another writable root (issue 26, finding 2).
//
// Sandboxed code can rewrite anything below a writable root: a command run with
// [root: read, A: write, A/x/proj: write] can `mv A/x A/x.old; mkdir A/x; ln -s OUT
// A/x/proj`. Resolving A/x/proj by path afterwards (filepath.EvalSymlinks, as the
// reference does) binds OUT writable in every later launch with that policy. So each
// writable root is resolved here by a walk of our own, from "/", one component at a
// time with O_PATH|O_NOFOLLOW:
//   - a symlink in a directory outside every other writable root is the user's and is
//     followed (a symlinked $TMPDIR, a workspace reached through a link in $HOME);
//   - a symlink in a directory at or below another writable root (its policy path or
//     its canonical target) was writable by sandboxed code: the launch is refused with
//     "cannot enforce sandbox writable root W because it crosses writable symlink S"
//     (the style of §2.10's carve-out refusal), whatever the symlink points to;
//   - a root reached through such a directory is bound by the walk's descriptor
//     (--bind-fd), not by path: bubblewrap binds the descriptor's path and then checks
//     that the mount is the descriptor's inode, so a swap that races the launch fails
//     the launch instead of redirecting the bind. Carve-outs below that root are opened
//     by walks that start from the same descriptor (openBeneath).
//   - the directories between the deepest other writable root above such a root and
//     the root itself are self-bound (by descriptor) while the enclosing root shows
//     them writable, as the ancestors of carve-outs are (§3.6 step 3): a command
//     running with this policy, say one left in the background by an earlier
//     process/start, cannot rename them (EBUSY), so it can neither swap the root's
//     path for the next launch nor move where that launch's mounts land.
// Roots outside every other writable root keep the plain --bind T T of §3.6.

import (
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/execlab/executor/sandbox/policy"
)

// maxRootSymlinks bounds the symlinks one root walk follows (Linux's MAXSYMLINKS).
const maxRootSymlinks = 40

// resolvedRoot is a writable root resolved by walkRoot.
type resolvedRoot struct {
	target string // canonical path
	fd     int    // O_PATH|O_CLOEXEC descriptor of target, owned by the caller
	// nested: target lies below a directory inside another writable root, so it must
	// be bound (and its carve-outs opened) by descriptor.
	nested bool
}

// writableRegions returns, for writable root w, the subtrees sandboxed code may have
// rewritten: the policy path and the canonical target of every other write entry.
func writableRegions(ents []mountEntry, w string) []string {
	var out []string
	for _, e := range ents {
		if e.access != policy.AccessWrite || e.path == w {
			continue
		}
		out = append(out, e.path)
		if t, err := filepath.EvalSymlinks(e.path); err == nil && t != e.path {
			out = append(out, t)
		}
	}
	return out
}

func withinAny(p string, regions []string) bool {
	for _, r := range regions {
		if policy.IsWithin(p, r) {
			return true
		}
	}
	return false
}

// errRootMissing: the writable root cannot be reached (a component does not exist, is
// not a directory, is not searchable, or the symlinks loop): it is skipped, as the
// launcher skipped every root filepath.EvalSymlinks failed on (§2.6).
var errRootMissing = errors.New("writable root is missing")

// resolveWritableRoot resolves writable root w of ents (see the file comment). A
// symlink inside another writable root is a *buildError; an unreachable root is
// errRootMissing.
func resolveWritableRoot(ents []mountEntry, w string) (resolvedRoot, error) {
	r, err := walkRoot(w, writableRegions(ents, w))
	var sym *errSymlinkComponent
	switch {
	case err == nil:
		return r, nil
	case errors.As(err, &sym):
		return r, fatalf("cannot enforce sandbox writable root %s because it crosses writable symlink %s", w, sym.path)
	}
	return r, errRootMissing
}

// walkRoot opens w from "/" one component at a time without letting the kernel
// follow symlinks, following each symlink itself unless the directory holding it lies
// in one of regions (then *errSymlinkComponent). The descriptor is O_CLOEXEC.
func walkRoot(w string, regions []string) (resolvedRoot, error) {
	fail := resolvedRoot{fd: -1}
	fd, err := unix.Open("/", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fail, err
	}
	cur, nested, links := "/", false, 0
	pending := strings.Split(w, "/")
	for len(pending) > 0 {
		seg := pending[0]
		pending = pending[1:]
		switch seg {
		case "", ".":
			continue
		case "..":
			if cur == "/" {
				continue
			}
			up, err := unix.Openat(fd, "..", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
			unix.Close(fd)
			if err != nil {
				return fail, err
			}
			fd, cur = up, path.Dir(cur)
			continue
		}
		inside := withinAny(cur, regions)
		next, err := unix.Openat(fd, seg, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			unix.Close(fd)
			return fail, err
		}
		var st unix.Stat_t
		if err := unix.Fstat(next, &st); err != nil {
			unix.Close(fd)
			unix.Close(next)
			return fail, err
		}
		if st.Mode&unix.S_IFMT != unix.S_IFLNK {
			unix.Close(fd)
			fd, cur, nested = next, path.Join(cur, seg), nested || inside
			continue
		}
		if inside {
			unix.Close(fd)
			unix.Close(next)
			return fail, &errSymlinkComponent{path: path.Join(cur, seg)}
		}
		links++
		link, err := readlinkFD(next)
		unix.Close(next)
		if err == nil && links > maxRootSymlinks {
			err = unix.ELOOP
		}
		if err != nil {
			unix.Close(fd)
			return fail, err
		}
		pending = append(strings.Split(link, "/"), pending...)
		if strings.HasPrefix(link, "/") {
			unix.Close(fd)
			if fd, err = unix.Open("/", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0); err != nil {
				return fail, err
			}
			cur = "/"
		}
	}
	return resolvedRoot{target: cur, fd: fd, nested: nested}, nil
}

// pinNestedAncestors self-binds the directories strictly between the deepest other
// writable root target above nested root target t and t, as long as the policy shows
// them writable (below a read-only or denied one nothing can be renamed).
func (b *mountBuilder) pinNestedAncestors(t string) error {
	enc := ""
	for _, c := range b.canon {
		if c != t && policy.IsWithin(t, c) && len(c) > len(enc) {
			enc = c
		}
	}
	if enc == "" {
		return nil
	}
	segs := strings.Split(strings.Trim(strings.TrimPrefix(t, enc), "/"), "/")
	cur := enc
	for _, seg := range segs[:len(segs)-1] {
		cur = path.Join(cur, seg)
		if accessOf(b.ents, cur) != policy.AccessWrite {
			return nil
		}
		if b.bound[cur] {
			continue
		}
		b.bound[cur] = true
		if err := b.bindDirFD(enc, cur, t, policy.AccessWrite); err != nil { // finish orders it before t
			return err
		}
	}
	return nil
}

// readlinkFD reads the symlink an O_PATH|O_NOFOLLOW descriptor refers to (the very
// inode that was inspected, not whatever its name points at by now).
func readlinkFD(fd int) (string, error) {
	buf := make([]byte, unix.PathMax)
	n, err := unix.Readlinkat(fd, "", buf)
	if err != nil {
		return "", fmt.Errorf("reading symlink: %w", err)
	}
	if n == len(buf) {
		return "", unix.ENAMETOOLONG
	}
	return string(buf[:n]), nil
}

// dupForBwrap returns a copy of fd without FD_CLOEXEC, for bwrap to inherit.
func dupForBwrap(fd int) (int, error) {
	return unix.FcntlInt(uintptr(fd), unix.F_DUPFD, 3)
}
