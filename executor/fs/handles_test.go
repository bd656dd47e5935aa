package fs_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/execlab/executor/executor/fs"
	"github.com/execlab/executor/executor/protocol"
	"github.com/execlab/executor/jsonwire"
)

func readBlock(t testing.TB, h *fs.Handles, id string, off, n uint64) (string, bool) {
	t.Helper()
	r, err := h.ReadBlock(ctx, &protocol.FsReadBlockParams{HandleID: id, Offset: off, Len: n})
	if err != nil {
		t.Fatalf("readBlock(%d,%d): %v", off, n, err)
	}
	b := []byte(r.Chunk)
	return string(b), r.Eof
}

func TestReadBlock_NonSequential(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	os.WriteFile(p, []byte("0123456789"), 0o644)
	h := fs.New(nil).NewHandles()
	defer h.CloseAll()
	if _, err := h.Open(ctx, &protocol.FsOpenParams{HandleID: "h", Path: uri(p)}); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		off, n uint64
		want   string
		eof    bool
	}{{6, 3, "678", false}, {1, 2, "12", false}, {8, 4, "89", true}, {0, 2, "01", false}, {10, 1, "", true}} {
		if got, eof := readBlock(t, h, "h", tt.off, tt.n); got != tt.want || eof != tt.eof {
			t.Errorf("(%d,%d): got %q eof=%v, want %q eof=%v", tt.off, tt.n, got, eof, tt.want, tt.eof)
		}
	}
}

func TestReadBlock_ExactBlockBoundary(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	os.WriteFile(p, make([]byte, 2<<20), 0o644)
	h := fs.New(nil).NewHandles()
	defer h.CloseAll()
	h.Open(ctx, &protocol.FsOpenParams{HandleID: "h", Path: uri(p)})
	for i, want := range []struct {
		n   int
		eof bool
	}{{1 << 20, false}, {1 << 20, false}, {0, true}} {
		got, eof := readBlock(t, h, "h", uint64(i)<<20, 1<<20)
		if len(got) != want.n || eof != want.eof {
			t.Fatalf("block %d: got %d bytes eof=%v, want %d eof=%v", i, len(got), eof, want.n, want.eof)
		}
	}
}

func TestOpen_Limits(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	os.WriteFile(p, []byte("x"), 0o644)
	h := fs.New(nil).NewHandles()
	defer h.CloseAll()
	_, err := h.Open(ctx, &protocol.FsOpenParams{HandleID: strings.Repeat("a", 33), Path: uri(p)})
	wantErr(t, "33-byte id", err, jsonwire.CodeInvalidRequest, "file handle ID must not exceed 32 bytes")
	if _, err := h.Open(ctx, &protocol.FsOpenParams{HandleID: strings.Repeat("a", 32), Path: uri(p)}); err != nil {
		t.Fatalf("32-byte id: %v", err)
	}
	h.Close(ctx, &protocol.FsCloseParams{HandleID: strings.Repeat("a", 32)})
	for i := 0; i < 128; i++ {
		if _, err := h.Open(ctx, &protocol.FsOpenParams{HandleID: fmt.Sprint(i), Path: uri(p)}); err != nil {
			t.Fatalf("open %d: %v", i, err)
		}
	}
	_, err = h.Open(ctx, &protocol.FsOpenParams{HandleID: "0", Path: uri(p)})
	wantErr(t, "duplicate", err, jsonwire.CodeInvalidRequest, "file handle `0` already exists")
	_, err = h.Open(ctx, &protocol.FsOpenParams{HandleID: "129th", Path: uri(p)})
	wantErr(t, "129th", err, jsonwire.CodeInvalidRequest, "at most 128 file handles may be open per connection")
	h.Close(ctx, &protocol.FsCloseParams{HandleID: "5"})
	h.Close(ctx, &protocol.FsCloseParams{HandleID: "5"}) // idempotent
	if _, err := h.Open(ctx, &protocol.FsOpenParams{HandleID: "129th", Path: uri(p)}); err != nil {
		t.Fatalf("after close: %v", err)
	}
	for _, n := range []uint64{0, 1<<20 + 1} {
		_, err = h.ReadBlock(ctx, &protocol.FsReadBlockParams{HandleID: "0", Len: n})
		wantErr(t, fmt.Sprint("len ", n), err, jsonwire.CodeInvalidRequest, "file read block length must be between 1 and 1048576")
	}
	_, err = h.ReadBlock(ctx, &protocol.FsReadBlockParams{HandleID: "nope", Len: 1})
	wantErr(t, "unknown", err, jsonwire.CodeNotFound, "unknown file handle `nope`")
}

func TestOpen_ReleasesCapacity(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	os.WriteFile(p, []byte("abc"), 0o644)
	h := fs.New(nil).NewHandles()
	defer h.CloseAll()
	for i := 0; i < 129; i++ {
		if _, err := h.Open(ctx, &protocol.FsOpenParams{HandleID: "h", Path: uri(p)}); err != nil {
			t.Fatalf("cycle %d: %v", i, err)
		}
		if got, eof := readBlock(t, h, "h", 0, 10); got != "abc" || !eof {
			t.Fatalf("cycle %d: got %q eof=%v", i, got, eof)
		}
		h.Close(ctx, &protocol.FsCloseParams{HandleID: "h"})
	}
}

func TestOpen_FIFOFailsFast(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(p, 0o644); err != nil {
		t.Fatal(err)
	}
	h := fs.New(nil).NewHandles()
	defer h.CloseAll()
	done := make(chan error, 1)
	go func() {
		_, err := h.Open(ctx, &protocol.FsOpenParams{HandleID: "f", Path: uri(p)})
		done <- err
	}()
	select {
	case err := <-done:
		wantErr(t, "fifo", err, jsonwire.CodeInvalidRequest, "path `"+p+"` is not a file")
	case <-time.After(5 * time.Second):
		t.Fatal("fs/open of a FIFO blocked")
	}
}

func TestOpen_KeepsReadingAfterReplacement(t *testing.T) {
	dir := t.TempDir()
	p, other := filepath.Join(dir, "f"), filepath.Join(dir, "g")
	os.WriteFile(p, []byte("original"), 0o644)
	os.WriteFile(other, []byte("replaced"), 0o644)
	h := fs.New(nil).NewHandles()
	defer h.CloseAll()
	h.Open(ctx, &protocol.FsOpenParams{HandleID: "h", Path: uri(p)})
	readBlock(t, h, "h", 0, 4)
	if err := os.Rename(other, p); err != nil {
		t.Fatal(err)
	}
	if got, _ := readBlock(t, h, "h", 4, 4); got != "inal" {
		t.Fatalf("got %q, want %q", got, "inal")
	}
}

func BenchmarkReadBlock_1MiB(b *testing.B) {
	dir := b.TempDir()
	p := filepath.Join(dir, "big")
	const size = 64 << 20
	if err := os.WriteFile(p, make([]byte, size), 0o644); err != nil {
		b.Fatal(err)
	}
	h := fs.New(nil).NewHandles()
	defer h.CloseAll()
	h.Open(ctx, &protocol.FsOpenParams{HandleID: "h", Path: uri(p)})
	b.SetBytes(1 << 20)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		off := uint64(i%(size>>20)) << 20
		if _, err := h.ReadBlock(ctx, &protocol.FsReadBlockParams{HandleID: "h", Offset: off, Len: 1 << 20}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkWalk_50000(b *testing.B) {
	dir := b.TempDir()
	for d := 0; d < 100; d++ {
		sub := filepath.Join(dir, fmt.Sprintf("d%03d", d))
		os.Mkdir(sub, 0o755)
		for f := 0; f < 499; f++ {
			os.WriteFile(filepath.Join(sub, fmt.Sprintf("f%03d", f)), nil, 0o644)
		}
	}
	s := fs.New(nil)
	opts := protocol.FsWalkOptions{MaxDepth: 64, MaxDirectories: 10000, MaxEntries: 50000}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		res, err := s.Walk(ctx, &protocol.FsWalkParams{Path: uri(dir), Options: opts})
		// Long temp-dir URIs can hit the 4 MiB response budget first (truncated).
		if err != nil || (len(res.Entries) != 50000 && !res.Truncated) {
			b.Fatalf("got %d entries (truncated %v), %v", len(res.Entries), res.Truncated, err)
		}
	}
}
