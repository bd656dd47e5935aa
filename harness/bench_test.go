package harness

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/execlab/executor/executor/protocol"
)

// BenchmarkDecodeProcessOutput measures the client's cost per 8 KiB process/output
// message (envelope scan + params decode), the path stdout_local depends on.
func BenchmarkDecodeProcessOutput(b *testing.B) {
	params, _ := json.Marshal(protocol.ProcessOutputNotification{ProcessID: "bench-stdout-1", Seq: 12345, Stream: protocol.StreamStdout, Chunk: make([]byte, 8192)})
	msg := append(append([]byte(`{"method":"process/output","params":`), params...), '}')
	b.SetBytes(8192)
	for b.Loop() {
		m, err := parseMessage(msg)
		if err != nil {
			b.Fatal(err)
		}
		out, err := Notification{Method: m.method, Params: m.params}.ProcessOutput()
		if err != nil || !bytes.Equal(out.Chunk, make([]byte, 8192)) {
			b.Fatal(err)
		}
	}
}
