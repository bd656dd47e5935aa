package fs

import (
	"context"
	"os"
	"strconv"

	"github.com/execlab/executor/executor/protocol"
	"golang.org/x/sys/unix"
)

// canonicalize runs Canonicalize in this process (routed decides where).
func (s *Service) canonicalize(ctx context.Context, p *protocol.FsCanonicalizeParams) (*protocol.FsCanonicalizeResult, error) {
	native, err := nativePath(p.Path)
	if err != nil {
		return nil, err
	}
	real, err := realpath(native)
	if err != nil {
		return nil, rpcError(err)
	}
	return &protocol.FsCanonicalizeResult{Path: protocol.FromNative(real)}, nil
}

// realpath resolves p as musl's realpath does: open with O_PATH and read the kernel's name
// for the descriptor, so errors are the kernel's errnos.
func realpath(p string) (string, error) {
	fd, err := unix.Open(p, unix.O_PATH|unix.O_CLOEXEC, 0)
	if err != nil {
		return "", &os.PathError{Op: "open", Path: p, Err: err}
	}
	defer unix.Close(fd)
	return os.Readlink("/proc/self/fd/" + strconv.Itoa(fd))
}
