package protocol_test

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"testing"

	"github.com/execlab/executor/executor/jsonrpc"
	"github.com/execlab/executor/executor/protocol"
	"github.com/execlab/executor/jsonwire"
)

// The server's decode path of one 1 MiB fs/writeBlock request (issue 28,
// writeblock_local): envelope parse, params decode into the pooled chunk, release.

func writeBlockRequest(tb testing.TB) ([]byte, []byte) {
	tb.Helper()
	data := make([]byte, 1<<20)
	rand.NewChaCha8([32]byte{28}).Read(data)
	params, err := json.Marshal(protocol.FsWriteBlockParams{HandleID: "bench-wb-1", Offset: 1 << 30, Chunk: protocol.BlockChunk{Data: data}})
	if err != nil {
		tb.Fatal(err)
	}
	return append(append([]byte(`{"id":12,"method":"fs/writeBlock","params":`), params...), '}'), data
}

// decodeWriteBlock is what the server does with one request before its write.
func decodeWriteBlock(msg []byte, p *protocol.FsWriteBlockParams) error {
	m, err := jsonrpc.Parse(msg)
	if err != nil {
		return err
	}
	if !m.ParamsChecked() {
		return jsonwire.UnmarshalParams(m.Params, p)
	}
	return jsonwire.UnmarshalCheckedParams(m.Params, p)
}

// TestWriteBlockDecode_AllocationsAndBytes checks the decoded block and pins the
// allocations of the decode path (7 when written: the Message, its method and id, the
// handle id, decoder bookkeeping); the 1 MiB chunk comes from the pool, so none of them
// is proportional to the block.
func TestWriteBlockDecode_AllocationsAndBytes(t *testing.T) {
	msg, data := writeBlockRequest(t)
	var p protocol.FsWriteBlockParams
	if err := decodeWriteBlock(msg, &p); err != nil {
		t.Fatal(err)
	}
	if p.HandleID != "bench-wb-1" || p.Offset != 1<<30 || !bytes.Equal(p.Chunk.Data, data) {
		t.Fatalf("got handle %q offset %d and %d bytes, want the block sent", p.HandleID, p.Offset, len(p.Chunk.Data))
	}
	p.Chunk.Release()
	got := testing.AllocsPerRun(20, func() {
		var p protocol.FsWriteBlockParams
		if err := decodeWriteBlock(msg, &p); err != nil {
			t.Fatal(err)
		}
		p.Chunk.Release()
	})
	if got > 7 && !raceEnabled { // under -race the pool drops chunks at random
		t.Errorf("got %v allocations per decoded request, want ≤ 7", got)
	}
}

// BenchmarkWriteBlockDecode measures the server's decode of one 1 MiB fs/writeBlock
// request (SetBytes: the decoded block).
func BenchmarkWriteBlockDecode(b *testing.B) {
	msg, _ := writeBlockRequest(b)
	b.SetBytes(1 << 20)
	b.ReportAllocs()
	for b.Loop() {
		var p protocol.FsWriteBlockParams
		if err := decodeWriteBlock(msg, &p); err != nil {
			b.Fatal(err)
		}
		p.Chunk.Release()
	}
}
