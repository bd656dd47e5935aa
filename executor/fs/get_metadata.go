package fs

import (
	"context"
	"os"
	"syscall"

	"github.com/execlab/executor/executor/protocol"
	"github.com/execlab/executor/jsonwire"
	"golang.org/x/sys/unix"
)

// errContainsSymlink is the no-follow refusal for a symlink final component.
var errContainsSymlink = jsonwire.InvalidRequest("path contains a symbolic link")

// getMetadata runs GetMetadata in this process (routed decides where).
func (s *Service) getMetadata(ctx context.Context, p *protocol.FsGetMetadataParams) (*protocol.FsGetMetadataResult, error) {
	native, err := nativePath(p.Path)
	if err != nil {
		return nil, err
	}
	if follow(p.FollowSymlinks) {
		lst, err := os.Lstat(native)
		if err != nil {
			return nil, rpcError(err)
		}
		st, err := os.Stat(native)
		if err != nil {
			return nil, rpcError(err)
		}
		sys := st.Sys().(*syscall.Stat_t)
		return &protocol.FsGetMetadataResult{
			IsDirectory:  st.IsDir(),
			IsFile:       st.Mode().IsRegular(),
			IsSymlink:    lst.Mode()&os.ModeSymlink != 0,
			Size:         uint64(st.Size()),
			ModifiedAtMs: sys.Mtim.Sec*1000 + sys.Mtim.Nsec/1e6,
		}, nil
	}
	par, err := openParentNoFollow(native)
	if err != nil {
		return nil, rpcError(err)
	}
	defer par.close()
	var stx unix.Statx_t
	if err := unix.Statx(par.dirfd, nameOrDot(par.name), unix.AT_SYMLINK_NOFOLLOW, unix.STATX_BASIC_STATS|unix.STATX_BTIME, &stx); err != nil {
		return nil, rpcError(&os.PathError{Op: "statx", Path: native, Err: err})
	}
	mode := uint32(stx.Mode) & unix.S_IFMT
	if mode == unix.S_IFLNK {
		return nil, errContainsSymlink
	}
	res := &protocol.FsGetMetadataResult{
		IsDirectory:  mode == unix.S_IFDIR,
		IsFile:       mode == unix.S_IFREG,
		Size:         stx.Size,
		ModifiedAtMs: stx.Mtime.Sec*1000 + int64(stx.Mtime.Nsec)/1e6,
	}
	if stx.Mask&unix.STATX_BTIME != 0 {
		res.CreatedAtMs = stx.Btime.Sec*1000 + int64(stx.Btime.Nsec)/1e6
	}
	return res, nil
}
