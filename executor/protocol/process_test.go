package protocol_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/execlab/executor/jsonwire"

	"github.com/execlab/executor/executor/protocol"
)

// Params decode with serde semantics through jsonwire.UnmarshalParams (spec/jsonrpc.md §1.5).
func TestProcessParams_SerdeDecoding(t *testing.T) {
	start := func(extra string) string {
		return `{"processId":"p","argv":["true"],"cwd":"file:///tmp","env":{},"tty":false` + extra + `}`
	}
	tests := []struct {
		name    string
		target  func() any
		in      string
		wantErr string
	}{
		{"minimal start", newStart, start(""), ""},
		{"nullable members", newStart, start(`,"arg0":null,"envPolicy":null,"sandbox":null,"networkProxy":null,"metadata":null`), ""},
		{"missing env", newStart, `{"processId":"p","argv":["true"],"cwd":"file:///tmp","tty":false}`, "missing field `env`"},
		{"missing tty", newStart, `{"processId":"p","argv":["true"],"cwd":"file:///tmp","env":{}}`, "missing field `tty`"},
		{"null pipeStdin", newStart, start(`,"pipeStdin":null`), "invalid type: null, expected a boolean"},
		{"null enforceManagedNetwork", newStart, start(`,"enforceManagedNetwork":null`), "invalid type: null, expected a boolean"},
		{"native cwd", newStart, `{"processId":"p","argv":["true"],"cwd":"/tmp","env":{},"tty":false}`, "invalid URI: relative URL without a base"},
		{"envPolicy complete", newStart, start(`,"envPolicy":{"inherit":"core","ignoreDefaultExcludes":false,"exclude":[],"set":{},"includeOnly":[]}`), ""},
		{"envPolicy missing member", newStart, start(`,"envPolicy":{"inherit":"core","exclude":[],"set":{},"includeOnly":[]}`), "missing field `ignoreDefaultExcludes`"},
		{"envPolicy null member", newStart, start(`,"envPolicy":{"inherit":"core","ignoreDefaultExcludes":null,"exclude":[],"set":{},"includeOnly":[]}`), "invalid type: null, expected a boolean"},
		{"envPolicy bad inherit", newStart, start(`,"envPolicy":{"inherit":"x","ignoreDefaultExcludes":false,"exclude":[],"set":{},"includeOnly":[]}`), "unknown variant `x`, expected one of `core`, `all`, `none`"},
		{"read defaults", func() any { return new(protocol.ProcessReadParams) }, `{"processId":"p","afterSeq":null,"maxBytes":null,"waitMs":null}`, ""},
		{"read fraction", func() any { return new(protocol.ProcessReadParams) }, `{"processId":"p","afterSeq":1.5}`, "invalid number"},
		{"write bad base64", func() any { return new(protocol.ProcessWriteParams) }, `{"processId":"p","chunk":"aGk","writeId":"w"}`, "Invalid padding"},
		{"write missing writeId", func() any { return new(protocol.ProcessWriteParams) }, `{"processId":"p","chunk":"aGk="}`, "missing field `writeId`"},
		{"signal interrupt", func() any { return new(protocol.ProcessSignalParams) }, `{"processId":"p","signal":"interrupt"}`, ""},
		{"signal unknown", func() any { return new(protocol.ProcessSignalParams) }, `{"processId":"p","signal":"kill"}`, "unknown variant `kill`, expected `interrupt`"},
		{"terminate", func() any { return new(protocol.ProcessTerminateParams) }, `{"processId":"p"}`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := jsonwire.UnmarshalParams(json.RawMessage(tt.in), tt.target())
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("got error %v, want success", err)
				}
				return
			}
			var re *jsonwire.Error
			if !errors.As(err, &re) || re.Code != jsonwire.CodeInvalidParams || re.Message != tt.wantErr {
				t.Fatalf("got error %v, want -32602 %q", err, tt.wantErr)
			}
		})
	}
}

func newStart() any { return new(protocol.ProcessStartParams) }

func TestAppendJSON_SerdeEscaping(t *testing.T) {
	n := &protocol.ProcessOutputNotification{ProcessID: "<\x7f\u2028\x1f\"", Stream: protocol.StreamStdout}
	want := `{"processId":"<` + "\x7f\u2028" + `\u001f\"","seq":0,"stream":"stdout","chunk":""}`
	if got := string(n.AppendJSON(nil)); got != want {
		t.Fatalf("AppendJSON = %s, want %s", got, want)
	}
}

func FuzzProcessStartParams(f *testing.F) {
	f.Add([]byte(`{"processId":"p","argv":["true"],"cwd":"file:///tmp","env":{},"tty":false}`))
	f.Add([]byte(`{"processId":"p","argv":[],"cwd":"file://h/x","env":{"A":"b"},"tty":true,"pipeStdin":true,"arg0":"x"}`))
	f.Add([]byte(`{"processId":"p","argv":["a"],"cwd":"file:///","env":{},"tty":false,"envPolicy":{"inherit":"all","ignoreDefaultExcludes":true,"exclude":["*"],"set":{"k":"v"},"includeOnly":[]}}`))
	f.Add([]byte(`{"processId":1}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var p protocol.ProcessStartParams
		if err := jsonwire.UnmarshalParams(json.RawMessage(data), &p); err != nil {
			var re *jsonwire.Error
			if !errors.As(err, &re) || re.Code != jsonwire.CodeInvalidParams {
				t.Fatalf("decode error %v is not a -32602 *jsonwire.Error", err)
			}
			return
		}
		// Whatever decodes has a canonical cwd that re-parses to itself.
		if again, err := protocol.ParsePathURI(string(p.Cwd)); err != nil || again != p.Cwd {
			t.Fatalf("cwd %q re-parses to %q, %v", p.Cwd, again, err)
		}
		if p.EnvPolicy != nil {
			switch p.EnvPolicy.Inherit {
			case protocol.EnvInheritAll, protocol.EnvInheritCore, protocol.EnvInheritNone:
			default:
				t.Fatalf("decoded unknown inherit %q", p.EnvPolicy.Inherit)
			}
		}
	})
}
