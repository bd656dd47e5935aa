package fs

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/execlab/executor/executor/protocol"
	"github.com/execlab/executor/jsonwire"
)

var (
	errCopyNeedsRecursive = jsonwire.InvalidRequest("fs/copy requires recursive: true when sourcePath is a directory")
	errCopyIntoItself     = jsonwire.InvalidRequest("fs/copy cannot copy a directory to itself or one of its descendants")
	errCopySpecial        = jsonwire.InvalidRequest("fs/copy only supports regular files, directories, and symlinks")
)

// copy runs Copy in this process (routed decides where).
func (s *Service) copy(ctx context.Context, p *protocol.FsCopyParams) (*protocol.FsEmptyResult, error) {
	src, err := nativePath(p.SourcePath)
	if err != nil {
		return nil, err
	}
	dst, err := nativePath(p.DestinationPath)
	if err != nil {
		return nil, err
	}
	st, err := os.Lstat(src)
	if err != nil {
		return nil, rpcError(err)
	}
	switch {
	case st.IsDir():
		if !p.Recursive {
			return nil, errCopyNeedsRecursive
		}
		if inside(src, dst) {
			return nil, errCopyIntoItself
		}
		err = copyTree(ctx, src, dst)
	case st.Mode()&os.ModeSymlink != 0:
		err = copySymlink(src, dst)
	case st.Mode().IsRegular():
		err = copyFile(src, dst, st.Mode().Perm())
	default:
		return nil, errCopySpecial
	}
	if err != nil {
		return nil, rpcError(err)
	}
	return &protocol.FsEmptyResult{}, nil
}

// inside reports whether dst equals src or lies below it, comparing canonical forms where
// they exist (the destination usually does not exist yet: its parent is canonicalized).
func inside(src, dst string) bool {
	canon := func(p string) string {
		if r, err := realpath(p); err == nil {
			return r
		}
		if r, err := realpath(filepath.Dir(p)); err == nil {
			return filepath.Join(r, filepath.Base(p))
		}
		return p
	}
	s, d := canon(src), canon(dst)
	return d == s || strings.HasPrefix(d, strings.TrimSuffix(s, "/")+"/")
}

func copySymlink(src, dst string) error {
	target, err := os.Readlink(src)
	if err != nil {
		return err
	}
	return os.Symlink(target, dst)
}

func copyFile(src, dst string, perm os.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, perm)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

func copyTree(ctx context.Context, src, dst string) error {
	if err := ctxErr(ctx); err != nil {
		return err
	}
	st, err := os.Stat(src)
	if err != nil {
		return err
	}
	if err := os.Mkdir(dst, st.Mode().Perm()); err != nil && !os.IsExist(err) {
		return err
	}
	des, err := os.ReadDir(src)
	if err != nil {
		return err
	}
	for _, de := range des {
		s, d := filepath.Join(src, de.Name()), filepath.Join(dst, de.Name())
		switch t := de.Type(); {
		case t.IsDir():
			err = copyTree(ctx, s, d)
		case t&os.ModeSymlink != 0:
			err = copySymlink(s, d)
		case t.IsRegular():
			info, ierr := de.Info()
			if ierr != nil {
				return ierr
			}
			err = copyFile(s, d, info.Mode().Perm())
		default:
			continue // special files inside a tree are skipped silently
		}
		if err != nil {
			return err
		}
	}
	return nil
}
