package fs

import (
	"context"
	"errors"
	"io"
	"os"
	"sync"
	"syscall"

	"github.com/execlab/executor/executor/protocol"
	"github.com/execlab/executor/jsonwire"
	"github.com/execlab/executor/sandbox/policy"
)

var (
	errSnapshotBudget  = jsonwire.InvalidRequest("sandboxed file reads may hold at most %d MiB per connection", MaxSnapshotBytes>>20)
	errSnapshotChanged = jsonwire.Internal("file changed while it was read for a sandboxed file read")
	errHandleIDTooLong = jsonwire.InvalidRequest("file handle ID must not exceed %d bytes", MaxHandleIDLen)
	errTooManyHandles  = jsonwire.InvalidRequest("at most %d file handles may be open per connection", MaxOpenHandles)
	errBlockLen        = jsonwire.InvalidRequest("file read block length must be between 1 and %d", MaxReadBlockLen)
)

// Handles is one connection's fs/open table (at most MaxOpenHandles), read and replace
// handles alike. It is safe for concurrent use. Handles are not closed at EOF; a read
// error closes one (a write error does not, as in the reference); CloseAll runs on
// disconnect. Reads are positional (pread), so blocks may come in any order and keep
// reading the opened file after its path is replaced.
//
// A sandboxed fs/open (a sandbox that needs the helper) is served from an in-memory
// snapshot the helper read inside the sandbox; snapshots of one connection total at
// most MaxSnapshotBytes.
type Handles struct {
	svc *Service
	// mu guards files, snapshotBytes and closed; it is never held across open, read or
	// a helper run, so a slow disk does not block fs/close or other handles.
	mu            sync.Mutex
	files         map[string]*handle // nil entry = reserved while opening
	snapshotBytes int64              // sum of len(data) over snapshot handles
	closed        bool
}

// handle is one open fs/open handle: a descriptor, or a sandboxed snapshot.
type handle struct {
	f     *os.File // nil for a snapshot
	data  []byte   // snapshot contents; never modified
	write bool     // opened with mode "replace" (write_block.go); f is write-only
}

func (h *handle) close() {
	if h.f != nil {
		h.f.Close()
	}
}

// NewHandles returns an empty handle table for one connection.
func (s *Service) NewHandles() *Handles {
	return &Handles{svc: s, files: map[string]*handle{}}
}

// Open implements fs/open. In mode "read" (the default) a FIFO or other non-regular file
// fails at once (O_NONBLOCK), never waiting for a writer; mode "replace" creates or
// truncates the file for fs/writeBlock (write_block.go).
func (h *Handles) Open(ctx context.Context, p *protocol.FsOpenParams) (*protocol.FsOpenResult, error) {
	if len(p.HandleID) > MaxHandleIDLen {
		return nil, errHandleIDTooLong
	}
	replace := p.Mode == protocol.FsOpenReplace
	pol, err := h.svc.sandboxFor(p.Sandbox, !replace)
	if err != nil {
		return nil, err
	}
	native, err := nativePath(p.Path)
	if err != nil {
		return nil, err
	}
	if err := h.reserve(p.HandleID); err != nil {
		return nil, err
	}
	var hd *handle
	switch {
	case replace:
		var f *os.File
		if pol != nil {
			f, err = h.openReplaceSandboxed(ctx, pol, p.Path, native)
		} else {
			f, err = openReplace(native)
		}
		hd = &handle{f: f, write: true}
	case pol != nil:
		hd, err = h.openSnapshot(ctx, pol, p.Path)
	default:
		var f *os.File
		f, err = openRegular(native)
		hd = &handle{f: f}
	}
	if err != nil {
		h.release(p.HandleID)
		return nil, err
	}
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		hd.close()
		return nil, errHandlesClosed
	}
	if hd.data != nil && h.snapshotBytes+int64(len(hd.data)) > MaxSnapshotBytes {
		delete(h.files, p.HandleID)
		h.mu.Unlock()
		return nil, errSnapshotBudget
	}
	h.snapshotBytes += int64(len(hd.data))
	h.files[p.HandleID] = hd
	h.mu.Unlock()
	return &protocol.FsOpenResult{HandleID: p.HandleID}, nil
}

// openSnapshot reads path inside the sandboxed helper, within what is left of the
// connection's snapshot budget, and verifies the snapshot's length.
func (h *Handles) openSnapshot(ctx context.Context, pol *policy.Policy, path protocol.PathURI) (*handle, error) {
	h.mu.Lock()
	left := MaxSnapshotBytes - h.snapshotBytes
	h.mu.Unlock()
	res, err := helperCall[helperOpenResult](ctx, h.svc, pol, protocol.MethodFsOpen, &helperOpenParams{Path: path, MaxBytes: left})
	if err != nil {
		return nil, err
	}
	data, err := jsonwire.DecodeBase64(res.DataBase64)
	if err != nil {
		return nil, jsonwire.Internal("failed to encode or decode fs sandbox helper message: %s", err.Error())
	}
	if int64(len(data)) != res.Size {
		return nil, jsonwire.Internal("failed to encode or decode fs sandbox helper message: snapshot of %d bytes, file of %d", len(data), res.Size)
	}
	if data == nil {
		data = []byte{}
	}
	return &handle{data: data}, nil
}

var errHandlesClosed = jsonwire.Internal("connection closed")

// reserve claims id before the open; it fails once CloseAll ran, so a replace open
// never truncates a file for a connection that is gone.
func (h *Handles) reserve(id string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return errHandlesClosed
	}
	if _, ok := h.files[id]; ok {
		return jsonwire.InvalidRequest("file handle `%s` already exists", id)
	}
	if len(h.files) >= MaxOpenHandles {
		return errTooManyHandles
	}
	h.files[id] = nil
	return nil
}

func (h *Handles) release(id string) {
	h.mu.Lock()
	delete(h.files, id)
	h.mu.Unlock()
}

func openRegular(native string) (*os.File, error) {
	f, err := os.OpenFile(native, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, rpcError(err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, rpcError(err)
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, jsonwire.InvalidRequest("path `%s` is not a file", native)
	}
	return f, nil
}

// ReadBlock implements fs/readBlock: up to len bytes at offset; eof iff fewer came back.
func (h *Handles) ReadBlock(ctx context.Context, p *protocol.FsReadBlockParams) (*protocol.FsReadBlockResult, error) {
	if p.Len < 1 || p.Len > MaxReadBlockLen {
		return nil, errBlockLen
	}
	h.mu.Lock()
	hd := h.files[p.HandleID]
	h.mu.Unlock()
	if hd == nil {
		return nil, jsonwire.NotFound("unknown file handle `%s`", p.HandleID)
	}
	if hd.f == nil { // snapshot
		var chunk []byte
		if p.Offset < uint64(len(hd.data)) {
			chunk = hd.data[p.Offset:min(uint64(len(hd.data)), p.Offset+p.Len)]
		}
		return &protocol.FsReadBlockResult{
			Chunk: chunk,
			Eof:   uint64(len(chunk)) < p.Len,
		}, nil
	}
	buf := make([]byte, p.Len)
	n, err := hd.f.ReadAt(buf, int64(min(p.Offset, 1<<63-1)))
	if err != nil && !errors.Is(err, io.EOF) {
		h.closeHandle(p.HandleID, hd)
		return nil, rpcError(err)
	}
	return &protocol.FsReadBlockResult{
		Chunk: buf[:n],
		Eof:   uint64(n) < p.Len,
	}, nil
}

// closeHandle removes id if it still maps to hd, and closes hd.
func (h *Handles) closeHandle(id string, hd *handle) {
	h.mu.Lock()
	if h.files[id] == hd {
		delete(h.files, id)
		h.snapshotBytes -= int64(len(hd.data))
	}
	h.mu.Unlock()
	hd.close()
}

// Close implements fs/close; unknown ids are fine.
func (h *Handles) Close(ctx context.Context, p *protocol.FsCloseParams) (*protocol.FsEmptyResult, error) {
	h.mu.Lock()
	hd, ok := h.files[p.HandleID]
	if ok && hd != nil {
		delete(h.files, p.HandleID)
		h.snapshotBytes -= int64(len(hd.data))
	}
	h.mu.Unlock()
	if hd != nil {
		hd.close()
	}
	return &protocol.FsEmptyResult{}, nil
}

// CloseAll closes every handle; later opens fail. Called on disconnect.
func (h *Handles) CloseAll() {
	h.mu.Lock()
	files := h.files
	h.files = map[string]*handle{}
	h.snapshotBytes = 0
	h.closed = true
	h.mu.Unlock()
	for _, hd := range files {
		if hd != nil {
			hd.close()
		}
	}
}
