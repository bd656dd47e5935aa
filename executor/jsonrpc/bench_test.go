package jsonrpc_test

import (
	"bytes"
	"encoding/base64"
	"testing"

	"github.com/execlab/executor/executor/jsonrpc"
	"github.com/execlab/executor/jsonwire"
)

// bigWrite is a process/write request carrying a 4 MiB base64 chunk (3 MiB decoded).
func bigWrite() []byte {
	chunk := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte("output line\n"), 3<<20/12))
	return []byte(`{"id":7,"method":"process/write","params":{"processId":"proc-1","chunk":"` + chunk + `","writeId":"w-1"}}`)
}

func BenchmarkParse_4MiBString(b *testing.B) {
	msg := bigWrite()
	b.SetBytes(int64(len(msg)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := jsonrpc.Parse(msg); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkUnmarshalParams_4MiBWrite(b *testing.B) {
	m, err := jsonrpc.Parse(bigWrite())
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(m.Params)))
	b.ReportAllocs()
	for b.Loop() {
		var p refWriteParams
		if err := jsonwire.UnmarshalParams(m.Params, &p); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParse_Small(b *testing.B) {
	msg := []byte(`{"id":12,"method":"process/read","params":{"processId":"proc-1","afterSeq":41,"waitMs":30000}}`)
	b.SetBytes(int64(len(msg)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := jsonrpc.Parse(msg); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkUnmarshalParams_Small(b *testing.B) {
	raw := []byte(`{"processId":"proc-1","afterSeq":41,"waitMs":30000}`)
	b.ReportAllocs()
	for b.Loop() {
		var p refReadParams
		if err := jsonwire.UnmarshalParams(raw, &p); err != nil {
			b.Fatal(err)
		}
	}
}
