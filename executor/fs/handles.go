package fs

import (
	"context"
	"encoding/base64"
	"errors"
	"io"
	"os"
	"sync"
	"syscall"

	"github.com/execlab/executor/executor/jsonrpc"
	"github.com/execlab/executor/executor/protocol"
)

var (
	errHandleIDTooLong = jsonrpc.InvalidRequest("file handle ID must not exceed %d bytes", MaxHandleIDLen)
	errTooManyHandles  = jsonrpc.InvalidRequest("at most %d file handles may be open per connection", MaxOpenHandles)
	errBlockLen        = jsonrpc.InvalidRequest("file read block length must be between 1 and %d", MaxReadBlockLen)
)

// Handles is one connection's fs/open table (at most MaxOpenHandles). It is safe for
// concurrent use. Handles are not closed at EOF; an I/O error closes one; CloseAll runs on
// disconnect. Reads are positional (pread), so blocks may come in any order and keep
// reading the opened file after its path is replaced.
type Handles struct {
	svc *Service
	// mu guards files; it is never held across open or read, so a slow disk does not block
	// fs/close or other handles.
	mu     sync.Mutex
	files  map[string]*os.File // nil entry = reserved while opening
	closed bool
}

// NewHandles returns an empty handle table for one connection.
func (s *Service) NewHandles() *Handles {
	return &Handles{svc: s, files: map[string]*os.File{}}
}

// Open implements fs/open. A FIFO or other non-regular file fails at once (O_NONBLOCK),
// never waiting for a writer.
func (h *Handles) Open(ctx context.Context, p *protocol.FsOpenParams) (*protocol.FsOpenResult, error) {
	if len(p.HandleID) > MaxHandleIDLen {
		return nil, errHandleIDTooLong
	}
	if err := sandboxGate(p.Sandbox); err != nil {
		return nil, err
	}
	native, err := nativePath(p.Path)
	if err != nil {
		return nil, err
	}
	if err := h.reserve(p.HandleID); err != nil {
		return nil, err
	}
	f, err := openRegular(native)
	if err != nil {
		h.release(p.HandleID)
		return nil, err
	}
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		f.Close()
		return nil, jsonrpc.Internal("connection closed")
	}
	h.files[p.HandleID] = f
	h.mu.Unlock()
	return &protocol.FsOpenResult{HandleID: p.HandleID}, nil
}

func (h *Handles) reserve(id string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.files[id]; ok {
		return jsonrpc.InvalidRequest("file handle `%s` already exists", id)
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
		return nil, jsonrpc.InvalidRequest("path `%s` is not a file", native)
	}
	return f, nil
}

// ReadBlock implements fs/readBlock: up to len bytes at offset; eof iff fewer came back.
func (h *Handles) ReadBlock(ctx context.Context, p *protocol.FsReadBlockParams) (*protocol.FsReadBlockResult, error) {
	if p.Len < 1 || p.Len > MaxReadBlockLen {
		return nil, errBlockLen
	}
	h.mu.Lock()
	f := h.files[p.HandleID]
	h.mu.Unlock()
	if f == nil {
		return nil, jsonrpc.NotFound("unknown file handle `%s`", p.HandleID)
	}
	buf := make([]byte, p.Len)
	n, err := f.ReadAt(buf, int64(min(p.Offset, 1<<63-1)))
	if err != nil && !errors.Is(err, io.EOF) {
		h.closeHandle(p.HandleID, f)
		return nil, rpcError(err)
	}
	return &protocol.FsReadBlockResult{
		Chunk: base64.StdEncoding.EncodeToString(buf[:n]),
		Eof:   uint64(n) < p.Len,
	}, nil
}

// closeHandle removes id if it still maps to f, and closes f.
func (h *Handles) closeHandle(id string, f *os.File) {
	h.mu.Lock()
	if h.files[id] == f {
		delete(h.files, id)
	}
	h.mu.Unlock()
	f.Close()
}

// Close implements fs/close; unknown ids are fine.
func (h *Handles) Close(ctx context.Context, p *protocol.FsCloseParams) (*protocol.FsEmptyResult, error) {
	h.mu.Lock()
	f, ok := h.files[p.HandleID]
	if ok && f != nil {
		delete(h.files, p.HandleID)
	}
	h.mu.Unlock()
	if f != nil {
		f.Close()
	}
	return &protocol.FsEmptyResult{}, nil
}

// CloseAll closes every handle; later opens fail. Called on disconnect.
func (h *Handles) CloseAll() {
	h.mu.Lock()
	files := h.files
	h.files = map[string]*os.File{}
	h.closed = true
	h.mu.Unlock()
	for _, f := range files {
		if f != nil {
			f.Close()
		}
	}
}
