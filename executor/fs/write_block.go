package fs

// Streaming writes: fs/open mode "replace" and fs/writeBlock (capabilities-0.171.0.md
// §8, fileWriteStreaming).
//
// Protocol flow: fs/open {handleId, path, mode:"replace"} creates or truncates path at
// once (O_WRONLY|O_CREAT|O_TRUNC|O_NONBLOCK, mode 0666 less the umask, so 0644 under the
// usual umask; an existing file keeps its mode; symlinks are followed; a FIFO without a
// reader fails with ENXIO instead of blocking). Each fs/writeBlock {handleId, offset,
// chunk} then writes 1..MaxWriteBlockLen bytes with pwrite: blocks may come in any order,
// overwrite each other, and leave a zero-filled hole past EOF. Nothing is staged or
// renamed: every block is visible as soon as its reply is sent, and fs/close (or a
// disconnect) just closes the descriptor.
//
// Checks, in the reference's order: the block length (-32600), offset+len within the
// signed 64-bit file offset (-32600), the handle (-32004 unknown), the handle's mode (a
// read handle: -32603 EBADF, the handle stays open), then the write (an OS error is sent
// and the handle stays open). fs/readBlock on a replace handle fails with EBADF from
// pread, which closes the handle as any read error does.
//
// Sandboxed replace: when the request's sandbox needs the helper, the helper opens the
// file inside the sandbox with the same flags (so the sandbox decides: a read-only mount
// fails with EROFS, "Read-only file system (os error 30)") and reports the file's device
// and inode; the executor then opens the same path write-only without O_CREAT or O_TRUNC
// and keeps the descriptor only if it names that inode. The reference receives the
// helper's descriptor instead; the inode check gives the same guarantee (the executor
// writes only to the file the sandbox let the helper open for writing) without passing
// descriptors out of bwrap.

import (
	"context"
	"math"
	"os"
	"syscall"

	"github.com/execlab/executor/executor/protocol"
	"github.com/execlab/executor/jsonwire"
	"github.com/execlab/executor/sandbox/policy"
)

var (
	errWriteBlockLen   = jsonwire.InvalidRequest("file write block length must be between 1 and %d", MaxWriteBlockLen)
	errWriteRange      = jsonwire.InvalidRequest("file write range exceeds the signed 64-bit file offset limit")
	errBadDescriptor   = rpcError(syscall.EBADF)
	errReplaceMismatch = jsonwire.Internal("file changed while it was opened for a sandboxed file write")
)

// replaceFlags are the open flags of a replace handle: write-only, created, truncated at
// open time, and non-blocking so that a FIFO without a reader fails (ENXIO) at once.
const replaceFlags = os.O_WRONLY | os.O_CREATE | os.O_TRUNC | syscall.O_NONBLOCK | syscall.O_CLOEXEC

// replaceFileMode is the mode of a file replace creates, before the umask (Rust's
// OpenOptions default).
const replaceFileMode = 0o666

// openReplace opens native for a replace handle in-process.
func openReplace(native string) (*os.File, error) {
	f, err := os.OpenFile(native, replaceFlags, replaceFileMode)
	if err != nil {
		return nil, rpcError(err)
	}
	return f, nil
}

// openReplaceSandboxed lets the helper create or truncate path inside pol's sandbox, then
// opens the inode the helper opened (see the file comment).
func (h *Handles) openReplaceSandboxed(ctx context.Context, pol *policy.Policy, path protocol.PathURI, native string) (*os.File, error) {
	res, err := helperCall[helperReplaceResult](ctx, h.svc, pol, helperMethodOpenReplace, &helperReplaceParams{Path: path})
	if err != nil {
		return nil, err
	}
	f, err := os.OpenFile(native, os.O_WRONLY|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, rpcError(err)
	}
	var st syscall.Stat_t
	if err := syscall.Fstat(int(f.Fd()), &st); err != nil {
		f.Close()
		return nil, rpcError(err)
	}
	if uint64(st.Dev) != res.Dev || st.Ino != res.Ino {
		f.Close()
		return nil, errReplaceMismatch
	}
	return f, nil
}

// WriteBlock implements fs/writeBlock: the chunk at offset, with pwrite.
// The chunk's pooled storage is released before it returns.
func (h *Handles) WriteBlock(_ context.Context, p *protocol.FsWriteBlockParams) (*protocol.FsEmptyResult, error) {
	defer p.Chunk.Release()
	n := uint64(len(p.Chunk.Data))
	if n < 1 || n > MaxWriteBlockLen {
		return nil, errWriteBlockLen
	}
	if p.Offset > math.MaxInt64-n {
		return nil, errWriteRange
	}
	h.mu.Lock()
	hd := h.files[p.HandleID]
	h.mu.Unlock()
	if hd == nil {
		return nil, jsonwire.NotFound("unknown file handle `%s`", p.HandleID)
	}
	if !hd.write {
		return nil, errBadDescriptor
	}
	if _, err := hd.f.WriteAt(p.Chunk.Data, int64(p.Offset)); err != nil {
		return nil, rpcError(err)
	}
	return &protocol.FsEmptyResult{}, nil
}

// helperMethodOpenReplace is the helper-only operation behind a sandboxed replace open.
const helperMethodOpenReplace = "fs/openReplace"

// helperReplaceParams and helperReplaceResult are the helper's replace open: create or
// truncate Path as fs/open mode "replace" does and report the file's identity.
type helperReplaceParams struct {
	Path protocol.PathURI `json:"path"`
}

type helperReplaceResult struct {
	Dev uint64 `json:"dev"`
	Ino uint64 `json:"ino"`
}

// helperOpenReplace runs inside the sandbox: the open is the sandbox's decision.
func helperOpenReplace(_ context.Context, p *helperReplaceParams) (*helperReplaceResult, error) {
	native, err := nativePath(p.Path)
	if err != nil {
		return nil, err
	}
	f, err := openReplace(native)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var st syscall.Stat_t
	if err := syscall.Fstat(int(f.Fd()), &st); err != nil {
		return nil, rpcError(err)
	}
	return &helperReplaceResult{Dev: uint64(st.Dev), Ino: st.Ino}, nil
}
