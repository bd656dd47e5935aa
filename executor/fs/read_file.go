package fs

import (
	"context"
	"io"

	"github.com/execlab/executor/executor/protocol"
	"github.com/execlab/executor/jsonwire"
	"golang.org/x/sys/unix"
)

// readFile runs ReadFile in this process (routed decides where).
func (s *Service) readFile(ctx context.Context, p *protocol.FsReadFileParams) (*protocol.FsReadFileResult, error) {
	native, err := nativePath(p.Path)
	if err != nil {
		return nil, err
	}
	// O_NONBLOCK: opening a FIFO must not wait for a writer.
	f, err := openFile(native, follow(p.FollowSymlinks), unix.O_RDONLY|unix.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
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
