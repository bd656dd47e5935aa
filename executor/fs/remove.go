package fs

import (
	"context"
	"errors"
	"os"
	"syscall"

	"github.com/execlab/executor/executor/protocol"
	"github.com/execlab/executor/jsonwire"
	"golang.org/x/sys/unix"
)

// remove runs Remove in this process (routed decides where).
func (s *Service) remove(ctx context.Context, p *protocol.FsRemoveParams) (*protocol.FsEmptyResult, error) {
	native, err := nativePath(p.Path)
	if err != nil {
		return nil, err
	}
	recursive, force := orTrue(p.Recursive), orTrue(p.Force)
	if !follow(p.FollowSymlinks) {
		if recursive {
			return nil, jsonwire.Internal("recursive no-follow removal is unsupported")
		}
		err = removeNoFollow(native)
	} else {
		err = removePath(native, recursive)
	}
	if err != nil {
		if force && isMissing(err) {
			return &protocol.FsEmptyResult{}, nil
		}
		return nil, rpcError(err)
	}
	return &protocol.FsEmptyResult{}, nil
}

func isMissing(err error) bool {
	return errors.Is(err, syscall.ENOENT)
}

func removePath(p string, recursive bool) error {
	st, err := os.Lstat(p)
	if err != nil {
		return err
	}
	if !st.IsDir() {
		return os.Remove(p)
	}
	if recursive {
		return os.RemoveAll(p)
	}
	if err := syscall.Rmdir(p); err != nil {
		return &os.PathError{Op: "rmdir", Path: p, Err: err}
	}
	return nil
}

func removeNoFollow(p string) error {
	par, err := openParentNoFollow(p)
	if err != nil {
		return err
	}
	defer par.close()
	st, err := par.lstat()
	if err != nil {
		return &os.PathError{Op: "lstat", Path: p, Err: err}
	}
	flags := 0
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFLNK:
		return errContainsSymlink
	case unix.S_IFDIR:
		flags = unix.AT_REMOVEDIR
	}
	if err := unix.Unlinkat(par.dirfd, nameOrDot(par.name), flags); err != nil {
		return &os.PathError{Op: "unlinkat", Path: p, Err: err}
	}
	return nil
}
