package protocol_test

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/execlab/executor/executor/protocol"
	"github.com/execlab/executor/jsonwire"
)

// TestAppendJSON_MatchesEncodingJSON checks the hand-written encoders against
// encoding/json for the same values, including strings that need escaping: the JSON
// they produce equals (as values) encoding/json's.
func TestAppendJSON_MatchesEncodingJSON(t *testing.T) {
	errText := "boom \"x\"\n"
	code := int32(-3)
	for _, v := range []interface{ AppendJSON([]byte) []byte }{
		&protocol.ProcessOutputNotification{ProcessID: "p \"q\" \\ \t\x01 é <&>", Seq: 1 << 60, Stream: protocol.StreamStderr, Chunk: []byte{0, 1, 2, 255}},
		&protocol.ProcessOutputNotification{ProcessID: "", Seq: 0, Stream: protocol.StreamPty},
		&protocol.ProcessReadResult{Chunks: []protocol.ProcessOutputChunk{{Seq: 1, Stream: protocol.StreamStdout, Chunk: []byte("hi\n")}, {Seq: 2, Stream: protocol.StreamStderr, Chunk: nil}}, NextSeq: 5, Exited: true, ExitCode: &code, Closed: true},
		&protocol.ProcessReadResult{Chunks: []protocol.ProcessOutputChunk{}, NextSeq: 1},
		&protocol.FsReadBlockResult{Chunk: jsonwire.Bytes("hello"), Eof: true},
		&protocol.FsReadBlockResult{Chunk: jsonwire.Bytes{}, Eof: false},
		&protocol.FsReadFileResult{DataBase64: jsonwire.Bytes{0, 1, 2, 0xff}},
		&protocol.HTTPBodyDelta{RequestID: "r\"1", Seq: 7, DeltaBase64: jsonwire.Bytes("x"), Done: false},
		&protocol.HTTPBodyDelta{RequestID: "r", Seq: 8, Done: true, Error: &errText},
		&protocol.FsWalkResult{Entries: []protocol.FsWalkEntry{}, Errors: []protocol.FsWalkError{}},
		&protocol.FsWalkResult{
			Entries:   []protocol.FsWalkEntry{{Path: "file:///a%20b", Kind: "file"}, {Path: "file:///d", Kind: "directory"}},
			Errors:    []protocol.FsWalkError{{Path: "file:///x", Message: "No such file or directory (os error 2)"}},
			Truncated: true,
		},
	} {
		got := v.AppendJSON(nil)
		want, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		var g, w any
		if err := json.Unmarshal(got, &g); err != nil {
			t.Fatalf("%T: invalid JSON %s: %v", v, got, err)
		}
		if err := json.Unmarshal(want, &w); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(g, w) {
			t.Errorf("%T: got %s, want %s", v, got, want)
		}
	}
}
