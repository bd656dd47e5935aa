package harness

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/execlab/executor/executor/protocol"
)

// TestWriteBlock_MatchesCall compares the fast path's request bytes with what Call
// encodes (encoding/json of protocol.FsWriteBlockParams) for random ids, offsets, blocks
// and handle ids, including handles encoding/json escapes.
func TestWriteBlock_MatchesCall(t *testing.T) {
	rng := rand.New(rand.NewPCG(28, 1))
	handles := []string{"", "h", "bench-wb-1", `q"uote`, `back\slash`, "<html>&", "tab\there", "nul\x00", "é", "\u2028", "bad\xffutf8", "\x7f"}
	for i := range 400 {
		h := handles[i%len(handles)]
		if i%3 == 0 {
			r := make([]byte, rng.IntN(12))
			for j := range r {
				r[j] = byte(rng.IntN(256))
			}
			h = string(r)
		}
		data := make([]byte, rng.IntN(3000))
		for j := range data {
			data[j] = byte(rng.Uint32())
		}
		if i == 0 {
			data = make([]byte, 1<<20)
		}
		id, off := rng.Int64N(1<<40), rng.Uint64()
		want, err := appendRequest(nil, id, protocol.MethodFsWriteBlock, protocol.FsWriteBlockParams{HandleID: h, Offset: off, Chunk: protocol.BlockChunk{Data: data}})
		if err != nil {
			t.Fatal(err)
		}
		prefix := []byte("keep")
		got := appendWriteBlockRequest(append([]byte(nil), prefix...), id, h, off, data)
		if !bytes.Equal(got, append(prefix, want...)) {
			n := min(len(got), 200)
			t.Fatalf("handle %q, %d bytes: got %q…, want %q…", h, len(data), got[:n], append(prefix, want...)[:min(len(want)+4, 200)])
		}
	}
}

// TestWriteBlock_EncodeAllocs pins the fast path at no allocation once its buffer is
// large enough.
func TestWriteBlock_EncodeAllocs(t *testing.T) {
	data := make([]byte, 1<<20)
	buf := appendWriteBlockRequest(nil, 1, "bench-wb-1", 0, data)
	if got := testing.AllocsPerRun(20, func() {
		buf = appendWriteBlockRequest(buf[:0], 123456, "bench-wb-1", 1<<30, data)
	}); got != 0 {
		t.Errorf("got %v allocations per request, want 0", got)
	}
}

// BenchmarkWriteBlockEncode compares the request encoding of a 1 MiB fs/writeBlock on
// the fast path with Call's (encoding/json).
func BenchmarkWriteBlockEncode(b *testing.B) {
	data := make([]byte, 1<<20)
	rand.NewChaCha8([32]byte{1}).Read(data)
	b.Run("fast", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		var buf []byte
		for b.Loop() {
			buf = appendWriteBlockRequest(buf[:0], 7, "bench-wb-1", 1<<20, data)
		}
	})
	b.Run("encoding_json", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			if _, err := appendRequest(nil, 7, protocol.MethodFsWriteBlock, protocol.FsWriteBlockParams{HandleID: "bench-wb-1", Offset: 1 << 20, Chunk: protocol.BlockChunk{Data: data}}); err != nil {
				b.Fatal(err)
			}
		}
	})
}
