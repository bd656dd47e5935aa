package jsonrpc

import (
	"encoding/json"
	"math/rand/v2"
	"testing"

	"github.com/execlab/executor/executor/protocol"
	"github.com/execlab/executor/jsonwire"
)

// BenchmarkWriteBlockAfterArrival measures the server's work on a 1 MiB fs/writeBlock
// request once its last byte has arrived, before the pwrite (writeblock_local, issue 28):
// "whole" is the path without an Arrival (scan, then params decode with the base64
// decode), "arrived" the path after WriteBlockArrival has decoded the chunk while the
// request came in (fed in 64 KiB reads outside the timer).
func BenchmarkWriteBlockAfterArrival(b *testing.B) {
	data := make([]byte, 1<<20)
	rand.NewChaCha8([32]byte{28}).Read(data)
	params, err := json.Marshal(protocol.FsWriteBlockParams{HandleID: "bench-wb-1", Offset: 1 << 30, Chunk: protocol.BlockChunk{Data: data}})
	if err != nil {
		b.Fatal(err)
	}
	msg := append(append([]byte(`{"id":12,"method":"fs/writeBlock","params":`), params...), '}')
	decode := func(b *testing.B, known jsonwire.KnownString, early any) {
		m, err := parseKnown(msg, known)
		if err != nil {
			b.Fatal(err)
		}
		var p protocol.FsWriteBlockParams
		if err := protocol.WithEarly(early, func() error { return jsonwire.UnmarshalCheckedParamsKnown(m.Params, &p, m.ParamsKnown()) }); err != nil {
			b.Fatal(err)
		}
		if len(p.Chunk.Data) != len(data) {
			b.Fatalf("decoded %d bytes", len(p.Chunk.Data))
		}
		p.Chunk.Release()
	}
	b.Run("whole", func(b *testing.B) {
		b.SetBytes(1 << 20)
		for b.Loop() {
			decode(b, jsonwire.KnownString{}, nil)
		}
	})
	b.Run("arrived", func(b *testing.B) {
		b.SetBytes(1 << 20)
		var a protocol.WriteBlockArrival
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			for n := 64 << 10; n < len(msg); n += 64 << 10 {
				a.Seen(msg[:n])
			}
			known, early, _ := a.Arrived(msg)
			if early == nil {
				b.Fatal("the Arrival decoded nothing")
			}
			b.StartTimer()
			decode(b, known, early)
		}
	})
}
