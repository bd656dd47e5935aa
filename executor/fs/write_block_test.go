package fs_test

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/execlab/executor/executor/fs"
	"github.com/execlab/executor/executor/protocol"
	"github.com/execlab/executor/internal/refbin"
	"github.com/execlab/executor/jsonwire"
)

func openReplace(t testing.TB, h *fs.Handles, id, path string) {
	t.Helper()
	if _, err := h.Open(ctx, &protocol.FsOpenParams{HandleID: id, Path: uri(path), Mode: protocol.FsOpenReplace}); err != nil {
		t.Fatalf("open replace %s: %v", path, err)
	}
}

func writeBlock(h *fs.Handles, id string, off uint64, b []byte) error {
	_, err := h.WriteBlock(ctx, &protocol.FsWriteBlockParams{HandleID: id, Offset: off, Chunk: protocol.BlockChunk{Data: b}})
	return err
}

func wantRPC(t testing.TB, err error, code int, msg string) {
	t.Helper()
	var re *jsonwire.Error
	if !errors.As(err, &re) || re.Code != code || re.Message != msg {
		t.Fatalf("got %v, want %d %q", err, code, msg)
	}
}

func TestWriteBlock_PositionalHoleAndOverwrite(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	h := fs.New(nil).NewHandles()
	defer h.CloseAll()
	openReplace(t, h, "w", p)
	if st, err := os.Stat(p); err != nil || st.Size() != 0 {
		t.Fatalf("after open: %v %v, want an empty file", st, err)
	}
	for _, w := range []struct {
		off  uint64
		data string
	}{{4, "EFGH"}, {0, "ABCD"}, {2, "xy"}, {12, "!"}} {
		if err := writeBlock(h, "w", w.off, []byte(w.data)); err != nil {
			t.Fatalf("write %q at %d: %v", w.data, w.off, err)
		}
	}
	got, _ := os.ReadFile(p)
	if want := "ABxyEFGH\x00\x00\x00\x00!"; string(got) != want {
		t.Fatalf("file = %q, want %q", got, want)
	}
	h.Close(ctx, &protocol.FsCloseParams{HandleID: "w"})
	wantRPC(t, writeBlock(h, "w", 0, []byte("a")), jsonwire.CodeNotFound, "unknown file handle `w`")
}

func TestOpenReplace_TruncatesAndKeepsMode(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	os.WriteFile(p, []byte("old contents"), 0o640)
	os.Chmod(p, 0o640)
	h := fs.New(nil).NewHandles()
	defer h.CloseAll()
	openReplace(t, h, "w", p)
	st, err := os.Stat(p)
	if err != nil || st.Size() != 0 || st.Mode().Perm() != 0o640 {
		t.Fatalf("after replace open: %v %v, want size 0 mode 0640", st, err)
	}
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	openReplace(t, h, "n", filepath.Join(dir, "new"))
	if st, err := os.Stat(filepath.Join(dir, "new")); err != nil || st.Mode().Perm() != 0o644 {
		t.Fatalf("new file: %v %v, want mode 0644", st, err)
	}
}

func TestOpenReplace_Errors(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	h := fs.New(nil).NewHandles()
	defer h.CloseAll()
	for _, c := range []struct {
		path string
		code int
		msg  string
	}{
		{fifo, jsonwire.CodeInternal, "No such device or address (os error 6)"},
		{dir, jsonwire.CodeInternal, "Is a directory (os error 21)"},
		{filepath.Join(dir, "missing", "x"), jsonwire.CodeNotFound, "No such file or directory (os error 2)"},
	} {
		_, err := h.Open(ctx, &protocol.FsOpenParams{HandleID: "e", Path: uri(c.path), Mode: protocol.FsOpenReplace})
		wantRPC(t, err, c.code, c.msg)
	}
	// The failed opens released the id.
	openReplace(t, h, "e", filepath.Join(dir, "ok"))
}

func TestWriteBlock_Errors(t *testing.T) {
	dir := t.TempDir()
	ro := filepath.Join(dir, "ro")
	os.WriteFile(ro, []byte("0123456789"), 0o644)
	h := fs.New(nil).NewHandles()
	defer h.CloseAll()
	openReplace(t, h, "w", filepath.Join(dir, "w"))
	if _, err := h.Open(ctx, &protocol.FsOpenParams{HandleID: "r", Path: uri(ro)}); err != nil {
		t.Fatal(err)
	}
	lenMsg := fmt.Sprintf("file write block length must be between 1 and %d", fs.MaxWriteBlockLen)
	rangeMsg := "file write range exceeds the signed 64-bit file offset limit"
	wantRPC(t, writeBlock(h, "w", 0, nil), jsonwire.CodeInvalidRequest, lenMsg)
	wantRPC(t, writeBlock(h, "nope", 0, nil), jsonwire.CodeInvalidRequest, lenMsg) // length first
	wantRPC(t, writeBlock(h, "w", 0, make([]byte, fs.MaxWriteBlockLen+1)), jsonwire.CodeInvalidRequest, lenMsg)
	wantRPC(t, writeBlock(h, "w", math.MaxUint64, []byte("a")), jsonwire.CodeInvalidRequest, rangeMsg)
	wantRPC(t, writeBlock(h, "nope", math.MaxInt64, []byte("a")), jsonwire.CodeInvalidRequest, rangeMsg) // range before lookup
	wantRPC(t, writeBlock(h, "w", math.MaxInt64-1, []byte("a")), jsonwire.CodeInternal, "File too large (os error 27)")
	if err := writeBlock(h, "w", 0, make([]byte, fs.MaxWriteBlockLen)); err != nil { // a write error kept the handle
		t.Fatalf("1 MiB block after EFBIG: %v", err)
	}
	wantRPC(t, writeBlock(h, "nope", 0, []byte("a")), jsonwire.CodeNotFound, "unknown file handle `nope`")
	// A read handle refuses writes and stays open.
	wantRPC(t, writeBlock(h, "r", 0, []byte("a")), jsonwire.CodeInternal, "Bad file descriptor (os error 9)")
	if got, _ := readBlock(t, h, "r", 0, 3); got != "012" {
		t.Fatalf("read handle after refused write: %q", got)
	}
	// A replace handle refuses reads, which close it as any read error does.
	_, err := h.ReadBlock(ctx, &protocol.FsReadBlockParams{HandleID: "w", Offset: 0, Len: 1})
	wantRPC(t, err, jsonwire.CodeInternal, "Bad file descriptor (os error 9)")
	wantRPC(t, writeBlock(h, "w", 0, []byte("a")), jsonwire.CodeNotFound, "unknown file handle `w`")
}

func TestWriteBlock_DisconnectLeavesPartialFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	h := fs.New(nil).NewHandles()
	openReplace(t, h, "w", p)
	writeBlock(h, "w", 0, []byte("part"))
	h.CloseAll()
	if got, _ := os.ReadFile(p); string(got) != "part" {
		t.Fatalf("after disconnect: %q, want %q", got, "part")
	}
	_, err := h.Open(ctx, &protocol.FsOpenParams{HandleID: "w2", Path: uri(p), Mode: protocol.FsOpenReplace})
	wantRPC(t, err, jsonwire.CodeInternal, "connection closed")
	if got, _ := os.ReadFile(p); string(got) != "part" {
		t.Fatalf("an open after CloseAll truncated the file: %q", got)
	}
}

// TestWriteBlock_LengthBoundsMatchReference sends the 1 MiB boundary blocks (too large for
// a conformance scenario file) to each reference release and to Handles.
func TestWriteBlock_LengthBoundsMatchReference(t *testing.T) {
	refbin.ForEachRelease(t, func(t *testing.T, r refbin.Release) {
		ref := refbin.Start(t, r.Path)
		dir, err := os.MkdirTemp("/var/tmp", "writeblock-probe-")
		if err != nil {
			t.Fatal(err)
		}
		defer os.RemoveAll(dir)
		h := fs.New(nil).NewHandles()
		defer h.CloseAll()
		refPath, ourPath := filepath.Join(dir, "ref"), filepath.Join(dir, "ours")
		if _, rerr := ref.Call("fs/open", map[string]any{"handleId": "w", "path": uri(refPath), "mode": "replace"}); rerr != nil {
			t.Fatalf("reference open: %+v", rerr)
		}
		openReplace(t, h, "w", ourPath)
		for _, n := range []int{fs.MaxWriteBlockLen, fs.MaxWriteBlockLen + 1, 1, 0} {
			chunk := bytes.Repeat([]byte{byte(n)}, n)
			_, rerr := ref.Call("fs/writeBlock", map[string]any{"handleId": "w", "offset": 3, "chunk": base64.StdEncoding.EncodeToString(chunk)})
			gerr := writeBlock(h, "w", 3, chunk)
			var g *jsonwire.Error
			errors.As(gerr, &g)
			switch {
			case rerr == nil && gerr == nil:
			case rerr == nil || g == nil || g.Code != rerr.Code || g.Message != rerr.Message:
				t.Errorf("%d bytes: got %v, want %+v", n, gerr, rerr)
			}
		}
		want, _ := os.ReadFile(refPath)
		got, _ := os.ReadFile(ourPath)
		if !bytes.Equal(got, want) || len(got) != 3+fs.MaxWriteBlockLen {
			t.Errorf("file contents differ: ours %d bytes, reference %d", len(got), len(want))
		}
	})
}
