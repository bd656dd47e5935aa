package protocol_test

import (
	"strings"
	"testing"

	"github.com/execlab/executor/executor/protocol"
	"github.com/execlab/executor/jsonwire"
)

// TestJSONSizeHint_Bounds: every hint is at least the length of the encoding, for empty,
// small, odd-sized and large payloads and strings that need escaping.
func TestJSONSizeHint_Bounds(t *testing.T) {
	esc := strings.Repeat("\x01\"\\é", 50)
	u := uint64(1<<64 - 1)
	code := int32(-2147483648)
	for _, n := range []int{0, 1, 2, 3, 4, 1000, 256 << 10, 1<<20 + 1} {
		payload := jsonwire.Bytes(make([]byte, n))
		values := []interface {
			AppendJSON([]byte) []byte
			JSONSizeHint() int
		}{
			&protocol.ProcessOutputNotification{ProcessID: esc, Seq: u, Stream: protocol.StreamStderr, Chunk: payload},
			&protocol.ProcessReadResult{Chunks: []protocol.ProcessOutputChunk{{Seq: u, Stream: protocol.StreamPty, Chunk: payload}, {Seq: u, Stream: protocol.StreamStdout, Chunk: payload}},
				NextSeq: u, Exited: true, ExitCode: &code, Closed: true, Failure: &esc, SandboxDenied: true},
			&protocol.ProcessReadResult{},
			&protocol.HTTPBodyDelta{RequestID: esc, Seq: u, DeltaBase64: payload, Done: true, Error: &esc},
			&protocol.FsReadBlockResult{Chunk: payload, Eof: true},
			&protocol.FsReadFileResult{DataBase64: payload},
		}
		for _, v := range values {
			if got, hint := len(v.AppendJSON(nil)), v.JSONSizeHint(); got > hint {
				t.Errorf("%T with %d payload bytes: encoding is %d bytes, hint %d", v, n, got, hint)
			}
		}
	}
}
