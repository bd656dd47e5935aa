package fs

import (
	"os"
	"strings"

	"golang.org/x/sys/unix"
)

// followSymlinks:false support (spec/jsonrpc.md §3.6 table). The path is walked one
// component at a time from "/" with O_NOFOLLOW|O_DIRECTORY, so a symlink in an ancestor
// fails with ENOTDIR ("Not a directory (os error 20)") as in the reference; the final
// component is then handled by the caller relative to the returned directory.

// parentNoFollow is an open ancestor directory and the final component name.
type parentNoFollow struct {
	dirfd int
	name  string // "" when the path is "/"
}

func (p *parentNoFollow) close() { unix.Close(p.dirfd) }

// openParentNoFollow opens the parent of the clean absolute path p without following
// symlinks in any ancestor.
func openParentNoFollow(p string) (*parentNoFollow, error) {
	dirfd, err := unix.Open("/", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: "/", Err: err}
	}
	rest := strings.TrimPrefix(p, "/")
	if rest == "" {
		return &parentNoFollow{dirfd: dirfd}, nil
	}
	comps := strings.Split(rest, "/")
	for _, c := range comps[:len(comps)-1] {
		next, err := unix.Openat(dirfd, c, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		unix.Close(dirfd)
		if err != nil {
			return nil, &os.PathError{Op: "open", Path: p, Err: err}
		}
		dirfd = next
	}
	return &parentNoFollow{dirfd: dirfd, name: comps[len(comps)-1]}, nil
}

// openFile opens the clean absolute path native with flags (unix.O_*; O_CLOEXEC is
// added) and perm. With follow, symlinks are followed as open(2) does; without it no
// component is (openParentNoFollow, then O_NOFOLLOW on the final one). Errors are the
// JSON-RPC errors (rpcError).
func openFile(native string, follow bool, flags int, perm uint32) (*os.File, error) {
	if follow {
		f, err := os.OpenFile(native, flags, os.FileMode(perm))
		if err != nil {
			return nil, rpcError(err)
		}
		return f, nil
	}
	par, err := openParentNoFollow(native)
	if err != nil {
		return nil, rpcError(err)
	}
	fd, err := unix.Openat(par.dirfd, nameOrDot(par.name), flags|unix.O_NOFOLLOW|unix.O_CLOEXEC, perm)
	par.close()
	if err != nil {
		return nil, rpcError(&os.PathError{Op: "open", Path: native, Err: err})
	}
	return os.NewFile(uintptr(fd), native), nil
}

// nameOrDot is the final component for an *at call: "." for the root itself.
func nameOrDot(name string) string {
	if name == "" {
		return "."
	}
	return name
}

// lstatAt stats the final component without following it.
func (p *parentNoFollow) lstat() (unix.Stat_t, error) {
	var st unix.Stat_t
	name, flags := p.name, unix.AT_SYMLINK_NOFOLLOW
	if name == "" {
		name, flags = ".", 0
	}
	err := unix.Fstatat(p.dirfd, name, &st, flags)
	return st, err
}
