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
