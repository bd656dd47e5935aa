package fs

import (
	"context"
	"io"
	"os"
	"syscall"

	"github.com/execlab/executor/executor/protocol"
	"github.com/execlab/executor/jsonwire"
	"github.com/execlab/executor/sandbox/policy"
	"golang.org/x/sys/unix"
)

// ReadFile implements fs/readFile: the whole file, or at most maxBytes when present (a
// documented deviation: 0.169.0 ignores maxBytes).
func (s *Service) ReadFile(ctx context.Context, p *protocol.FsReadFileParams) (*protocol.FsReadFileResult, error) {
	return routed(ctx, s, protocol.MethodFsReadFile, true, p, func(p *protocol.FsReadFileParams) **policy.Context { return &p.Sandbox }, s.readFile)
}

// readFile runs ReadFile in this process (routed decides where).
func (s *Service) readFile(ctx context.Context, p *protocol.FsReadFileParams) (*protocol.FsReadFileResult, error) {
	native, err := nativePath(p.Path)
	if err != nil {
		return nil, err
	}
	var f *os.File
	if follow(p.FollowSymlinks) {
		// O_NONBLOCK: opening a FIFO must not wait for a writer.
		f, err = os.OpenFile(native, os.O_RDONLY|syscall.O_NONBLOCK, 0)
		if err != nil {
			return nil, rpcError(err)
		}
	} else {
		par, err := openParentNoFollow(native)
		if err != nil {
			return nil, rpcError(err)
		}
		fd, err := unix.Openat(par.dirfd, nameOrDot(par.name), unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
		par.close()
		if err != nil {
			return nil, rpcError(&os.PathError{Op: "open", Path: native, Err: err})
		}
		f = os.NewFile(uintptr(fd), native)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, rpcError(err)
	}
	if !st.Mode().IsRegular() {
		if follow(p.FollowSymlinks) {
			return nil, jsonwire.InvalidRequest("path `%s` is not a file", native)
		}
		return nil, jsonwire.InvalidRequest("path is not a regular file")
	}
	var r io.Reader = f
	if p.MaxBytes != nil {
		r = io.LimitReader(f, int64(min(*p.MaxBytes, uint64(1)<<62)))
	}
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, rpcError(err)
	}
	return &protocol.FsReadFileResult{DataBase64: data}, nil
}

func nameOrDot(name string) string {
	if name == "" {
		return "."
	}
	return name
}
