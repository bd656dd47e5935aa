package protocol_test

import (
	"encoding/base64"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/execlab/executor/executor/protocol"
)

func TestChunkBytes_Decode(t *testing.T) {
	tests := []struct {
		in      string
		want    string
		wantErr string
	}{
		{`"aGkK"`, "hi\n", ""},
		{`""`, "", ""},
		{`"aGk="`, "hi", ""},
		{`"aGk"`, "", "Invalid padding"},
		{`"aG=k"`, "", "Invalid padding"},
		{`"aGk=\n"`, "", "Invalid symbol 10, offset 4."},
		{`"a-k_"`, "", "Invalid symbol 45, offset 1."},
		{`"a k="`, "", "Invalid symbol 32, offset 1."},
	}
	for _, tt := range tests {
		var b protocol.ChunkBytes
		err := json.Unmarshal([]byte(tt.in), &b)
		if tt.wantErr != "" {
			if err == nil || err.Error() != tt.wantErr {
				t.Errorf("decode %s: got err %v, want %q", tt.in, err, tt.wantErr)
			}
			continue
		}
		if err != nil || string(b) != tt.want {
			t.Errorf("decode %s = %q, %v; want %q", tt.in, b, err, tt.want)
		}
	}
}

func TestEnums_RejectUnknownVariants(t *testing.T) {
	var inh protocol.EnvInherit
	if err := json.Unmarshal([]byte(`"some"`), &inh); err == nil || err.Error() != "unknown variant `some`, expected one of `all`, `core`, `none`" {
		t.Errorf("EnvInherit error = %v", err)
	}
	var sig protocol.ProcessSignal
	if err := json.Unmarshal([]byte(`"kill"`), &sig); err == nil || err.Error() != "unknown variant `kill`, expected `interrupt`" {
		t.Errorf("ProcessSignal error = %v", err)
	}
	if err := json.Unmarshal([]byte(`"interrupt"`), &sig); err != nil || sig != protocol.SignalInterrupt {
		t.Errorf("ProcessSignal(interrupt) = %q, %v", sig, err)
	}
}

// The hand-written encoders produce JSON equal (as values) to encoding/json's.
func TestAppendJSON_MatchesEncodingJSON(t *testing.T) {
	code := int32(-3)
	values := []interface {
		AppendJSON([]byte) []byte
	}{
		&protocol.ProcessOutputNotification{ProcessID: "p \"q\" \\ \t\x01 é <&>", Seq: 1 << 60, Stream: protocol.StreamStderr, Chunk: []byte{0, 1, 2, 255}},
		&protocol.ProcessOutputNotification{ProcessID: "", Seq: 0, Stream: protocol.StreamPty},
		&protocol.ProcessReadResult{Chunks: []protocol.ProcessOutputChunk{{Seq: 1, Stream: protocol.StreamStdout, Chunk: []byte("hi\n")}, {Seq: 2, Stream: protocol.StreamStderr, Chunk: nil}}, NextSeq: 5, Exited: true, ExitCode: &code, Closed: true},
		&protocol.ProcessReadResult{Chunks: []protocol.ProcessOutputChunk{}, NextSeq: 1},
	}
	for _, v := range values {
		got := v.AppendJSON(nil)
		want, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		var g, w any
		if err := json.Unmarshal(got, &g); err != nil {
			t.Fatalf("AppendJSON produced invalid JSON %s: %v", got, err)
		}
		if err := json.Unmarshal(want, &w); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(g, w) {
			t.Errorf("AppendJSON = %s, want %s", got, want)
		}
	}
}

func TestAppendJSON_SerdeEscaping(t *testing.T) {
	n := &protocol.ProcessOutputNotification{ProcessID: "<\x7f\u2028\x1f\"", Stream: protocol.StreamStdout}
	want := `{"processId":"<` + "\x7f\u2028" + `\u001f\"","seq":0,"stream":"stdout","chunk":""}`
	if got := string(n.AppendJSON(nil)); got != want {
		t.Fatalf("AppendJSON = %s, want %s", got, want)
	}
}

func TestProcessParams_Decode(t *testing.T) {
	var p protocol.ProcessStartParams
	in := `{"processId":"proc-1","argv":["true"],"cwd":"file:///tmp","env":{},"tty":false,"arg0":null,"envPolicy":null,"sandbox":null,"unknown":1}`
	if err := json.Unmarshal([]byte(in), &p); err != nil {
		t.Fatal(err)
	}
	if p.ProcessID != "proc-1" || p.Cwd != "file:///tmp" || p.Arg0 != nil || p.EnvPolicy != nil || p.PipeStdin {
		t.Fatalf("decoded %+v", p)
	}
}

func FuzzChunkBytes(f *testing.F) {
	for _, s := range []string{`"aGkK"`, `""`, `"aGk"`, `"a-k_"`, `"aGk=\n"`, `null`, `1`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var b protocol.ChunkBytes
		if err := json.Unmarshal(data, &b); err != nil {
			return
		}
		// Whatever decodes re-encodes to the canonical padded form and round-trips.
		enc, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		var back protocol.ChunkBytes
		if err := json.Unmarshal(enc, &back); err != nil || string(back) != string(b) {
			t.Fatalf("round trip of %q: %q, %v", b, back, err)
		}
		var s string
		_ = json.Unmarshal(enc, &s)
		if _, err := base64.StdEncoding.Strict().DecodeString(s); err != nil {
			t.Fatalf("encoding %q is not strict base64: %v", s, err)
		}
	})
}
