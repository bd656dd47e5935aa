package protocol_test

import (
	"testing"

	"github.com/execlab/executor/executor/protocol"
	"github.com/execlab/executor/jsonwire"
)

// The encoders of the streaming hot paths (issue 16): one process/output chunk, one
// fs/readBlock result, one body delta. Each appends into a buffer with room (as the
// connection's pooled buffers provide), which must not allocate.

func hotValues() map[string]interface {
	AppendJSON([]byte) []byte
	JSONSizeHint() int
} {
	chunk := jsonwire.Bytes(make([]byte, 256<<10))
	return map[string]interface {
		AppendJSON([]byte) []byte
		JSONSizeHint() int
	}{
		"ProcessOutput256KiB": &protocol.ProcessOutputNotification{ProcessID: "proc-1", Seq: 12345, Stream: protocol.StreamStdout, Chunk: chunk},
		"ReadBlock1MiB":       &protocol.FsReadBlockResult{Chunk: jsonwire.Bytes(make([]byte, 1<<20))},
		"BodyDelta256KiB":     &protocol.HTTPBodyDelta{RequestID: "req-1", Seq: 9, DeltaBase64: chunk},
	}
}

// TestAppendJSON_HotPathsAllocateNothing pins the hot encoders at zero allocations when
// the buffer has room (its size hint).
func TestAppendJSON_HotPathsAllocateNothing(t *testing.T) {
	for name, v := range hotValues() {
		buf := make([]byte, 0, v.JSONSizeHint())
		if got := testing.AllocsPerRun(20, func() { buf = v.AppendJSON(buf[:0]) }); got != 0 {
			t.Errorf("%s: got %v allocs per AppendJSON, want 0", name, got)
		}
	}
}

func BenchmarkAppendJSON(b *testing.B) {
	for name, v := range hotValues() {
		b.Run(name, func(b *testing.B) {
			buf := make([]byte, 0, v.JSONSizeHint())
			b.SetBytes(int64(len(v.AppendJSON(nil))))
			b.ReportAllocs()
			for b.Loop() {
				buf = v.AppendJSON(buf[:0])
			}
		})
	}
}
