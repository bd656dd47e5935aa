package fs

import (
	"context"
	"os"

	"github.com/execlab/executor/executor/protocol"
	"github.com/execlab/executor/jsonwire"
	"github.com/execlab/executor/sandbox/policy"
	"golang.org/x/sys/unix"
)

// WriteFile implements fs/writeFile: create or truncate in place (an existing hard link keeps
// its inode); parents are never created (missing parent → -32004).
func (s *Service) WriteFile(ctx context.Context, p *protocol.FsWriteFileParams) (*protocol.FsEmptyResult, error) {
	return routed(ctx, s, protocol.MethodFsWriteFile, false, p, func(p *protocol.FsWriteFileParams) **policy.Context { return &p.Sandbox }, s.writeFile)
}

// writeFile runs WriteFile in this process (routed decides where).
func (s *Service) writeFile(ctx context.Context, p *protocol.FsWriteFileParams) (*protocol.FsEmptyResult, error) {
	native, err := nativePath(p.Path)
	if err != nil {
		return nil, err
	}
	data, derr := jsonwire.DecodeBase64(p.DataBase64)
	if derr != nil {
		return nil, jsonwire.InvalidRequest("fs/writeFile requires valid base64 dataBase64: %s", derr.Error())
	}
	var f *os.File
	if follow(p.FollowSymlinks) {
		f, err = os.OpenFile(native, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o666)
		if err != nil {
			return nil, rpcError(err)
		}
	} else {
		par, err := openParentNoFollow(native)
		if err != nil {
			return nil, rpcError(err)
		}
		fd, err := unix.Openat(par.dirfd, nameOrDot(par.name), unix.O_WRONLY|unix.O_CREAT|unix.O_TRUNC|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o666)
		par.close()
		if err != nil {
			return nil, rpcError(&os.PathError{Op: "open", Path: native, Err: err})
		}
		f = os.NewFile(uintptr(fd), native)
	}
	_, werr := f.Write(data)
	cerr := f.Close()
	if werr != nil {
		return nil, rpcError(werr)
	}
	if cerr != nil {
		return nil, rpcError(cerr)
	}
	return &protocol.FsEmptyResult{}, nil
}
