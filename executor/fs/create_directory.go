package fs

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"syscall"

	"github.com/execlab/executor/executor/protocol"
	"golang.org/x/sys/unix"
)

// createDirectory runs CreateDirectory in this process (routed decides where).
func (s *Service) createDirectory(ctx context.Context, p *protocol.FsCreateDirectoryParams) (*protocol.FsEmptyResult, error) {
	native, err := nativePath(p.Path)
	if err != nil {
		return nil, err
	}
	recursive := orTrue(p.Recursive)
	switch {
	case follow(p.FollowSymlinks) && recursive:
		err = createDirAll(native)
	case follow(p.FollowSymlinks):
		err = os.Mkdir(native, 0o777)
	default:
		err = createDirNoFollow(native, recursive)
	}
	if err != nil {
		return nil, rpcError(err)
	}
	return &protocol.FsEmptyResult{}, nil
}

// createDirAll mirrors Rust's fs::create_dir_all.
func createDirAll(p string) error {
	err := os.Mkdir(p, 0o777)
	if err == nil {
		return nil
	}
	if errors.Is(err, syscall.ENOENT) {
		parent := filepath.Dir(p)
		if parent == p {
			return err
		}
		if perr := createDirAll(parent); perr != nil {
			return perr
		}
		err = os.Mkdir(p, 0o777)
		if err == nil {
			return nil
		}
	}
	if st, serr := os.Stat(p); serr == nil && st.IsDir() {
		return nil
	}
	return err
}

// createDirNoFollow creates p without traversing symlinks: ancestors are walked with
// O_NOFOLLOW (created when recursive), and a symlink or file at the final component is
// ENOTDIR when recursive, EEXIST otherwise (observed from codex 0.169.0).
func createDirNoFollow(p string, recursive bool) error {
	if recursive {
		parent := filepath.Dir(p)
		if parent != p {
			if err := createDirNoFollow(parent, true); err != nil {
				return err
			}
		}
	}
	par, err := openParentNoFollow(p)
	if err != nil {
		return err
	}
	defer par.close()
	if par.name == "" {
		return nil
	}
	err = unix.Mkdirat(par.dirfd, par.name, 0o777)
	if err == nil {
		return nil
	}
	if err == unix.EEXIST && recursive {
		st, serr := par.lstat()
		if serr == nil && st.Mode&unix.S_IFMT == unix.S_IFDIR {
			return nil
		}
		return &os.PathError{Op: "mkdir", Path: p, Err: unix.ENOTDIR}
	}
	return &os.PathError{Op: "mkdir", Path: p, Err: err}
}
