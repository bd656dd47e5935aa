package harness

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/execlab/executor/executor/protocol"
	"github.com/execlab/executor/jsonwire"
)

func TestParseMessage_Classifies(t *testing.T) {
	tests := []struct {
		name, in   string
		wantKind   jsonwire.Kind
		wantMethod string
		wantID     string
		wantParams string
	}{
		{"response", `{"id":1,"result":{"a":[1,"}"]}}`, jsonwire.KindResponse, "", "1", ""},
		{"error", `{"id":2,"error":{"code":-32601,"message":"x"}}`, jsonwire.KindError, "", "2", ""},
		{"malformed reply", `{"id":-1,"error":{"code":-32600,"message":"x"}}`, jsonwire.KindError, "", "-1", ""},
		{"notification", `{"method":"process/closed","params":{"processId":"p","seq":3}}`, jsonwire.KindNotification, "process/closed", "", `{"processId":"p","seq":3}`},
		{"notification null id", `{"id":null,"method":"m"}`, jsonwire.KindNotification, "m", "", ""},
		{"request", `{"id":"s","method":"network/policyRequest","params":[]}`, jsonwire.KindRequest, "network/policyRequest", `"s"`, `[]`},
		{"ignored members and space", " {\"jsonrpc\":\"2.0\", \"trace\":{\"x\":[{}]}, \"id\" : 3 , \"result\" : {} }\n", jsonwire.KindResponse, "", "3", ""},
		{"escaped key and method", `{"meth\u006fd":"a\/b"}`, jsonwire.KindNotification, "a/b", "", ""},
		{"escaped quotes in values", `{"id":4,"result":{"s":"a\"}\\"}}`, jsonwire.KindResponse, "", "4", ""},
		{"large reply past the executor's value budget", `{"id":5,"result":[` + strings.Repeat("0,", jsonwire.MaxValues) + `0]}`, jsonwire.KindResponse, "", "5", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, err := parseMessage([]byte(tc.in))
			if err != nil {
				t.Fatalf("got error %v, want nil", err)
			}
			if m.kind != tc.wantKind || m.method != tc.wantMethod || string(m.id) != tc.wantID || string(m.params) != tc.wantParams {
				t.Errorf("got kind %d method %q id %q params %q, want %d %q %q %q",
					m.kind, m.method, m.id, m.params, tc.wantKind, tc.wantMethod, tc.wantID, tc.wantParams)
			}
		})
	}
}

func TestParseMessage_Rejects(t *testing.T) {
	for _, in := range []string{
		``, `not-json`, `[]`, `"x"`, `{`, `{"id":1`, `{"id":1,"result":{}`, `{"id":1}`, `{}`,
		`{"method":1}`, `{"id":1,"result":"unterminated}`, `{"id":1,"result":{}}}`, `{"a" 1}`,
		`{"id":1,,"result":{}}`, `{id:1}`, `{"method":"a` + "\x01" + `"}`,
		`{"id":1,"id":2,"result":{}}`, `{"id":1,"result":01}`, `{"id":null,"error":{}}`,
	} {
		if m, err := parseMessage([]byte(in)); err == nil {
			t.Errorf("parseMessage(%q): got %+v, want an error", in, m)
		}
	}
}

func TestProcessOutput_FastPathMatchesEncodingJSON(t *testing.T) {
	for _, params := range []string{
		`{"processId":"p","seq":1,"stream":"stdout","chunk":"aGkK"}`,
		`{"chunk":"","stream":"pty","seq":18446744073709551615,"processId":"é"}`,
		`{"processId":"p\n","seq":1,"stream":"stdout","chunk":"aGkK"}`,     // escape: slow path
		`{"processId":"p","seq":1,"stream":"stdout","chunk":"aG\/kK"}`,     // escape in chunk: error either way
		`{"processId":"p","seq":1,"stream":"stdout","chunk":"aGk"}`,        // unpadded: error
		`{"processId":"p","seq":1,"stream":"stdout","chunk":"aGkK","x":1}`, // unknown member: slow path
		`{"processId":"p","seq":1.0,"stream":"stdout","chunk":"aGkK"}`,
	} {
		n := Notification{Method: protocol.MethodProcessOutput, Params: json.RawMessage(params)}
		got, gotErr := n.ProcessOutput()
		var want protocol.ProcessOutputNotification
		wantErr := json.Unmarshal([]byte(params), &want)
		if (gotErr != nil) != (wantErr != nil) {
			t.Errorf("%s: got error %v, want %v", params, gotErr, wantErr)
			continue
		}
		if gotErr == nil && !reflect.DeepEqual(normalize(got), normalize(want)) {
			t.Errorf("%s: got %+v, want %+v", params, got, want)
		}
	}
}

func normalize(n protocol.ProcessOutputNotification) protocol.ProcessOutputNotification {
	if n.Chunk == nil {
		n.Chunk = []byte{}
	}
	return n
}

func TestProcessOutput_FastPathAllocations(t *testing.T) {
	chunk := bytes.Repeat([]byte{0}, 8192)
	params, _ := json.Marshal(protocol.ProcessOutputNotification{ProcessID: "p", Seq: 7, Stream: protocol.StreamStdout, Chunk: chunk})
	n := Notification{Method: protocol.MethodProcessOutput, Params: params}
	// One for the chunk, one for the processId string; under the race detector, a refill of
	// jsonwire's scanner pool (a Notification made by hand is validated first).
	if got := testing.AllocsPerRun(100, func() { n.ProcessOutput() }); got > 2+scannerRefill {
		t.Errorf("got %v allocations per process/output decode, want at most 2", got)
	}
}

// FuzzParseMessage checks that parseMessage never panics, rejects what jsonwire's scanner
// rejects and, on valid JSON, agrees with encoding/json about every member it keeps and
// about the classification.
func FuzzParseMessage(f *testing.F) {
	for _, s := range []string{
		`{"id":1,"result":{}}`,
		`{"id":-1,"error":{"code":-32600,"message":"failed to parse"}}`,
		`{"method":"process/output","params":{"processId":"p","seq":1,"stream":"stdout","chunk":"aGkK"}}`,
		`{"id":"x","method":"network/policyRequest","params":{"processId":"p"}}`,
		`{"meth\u006fd":"a","params":[1,{"}":"]"}]}`,
		`not-json`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := parseMessage(b)
		if jsonwire.Validate(b) != nil {
			if err == nil {
				t.Fatalf("got kind %d for %q, which jsonwire rejects", m.kind, b)
			}
			return
		}
		var obj map[string]json.RawMessage
		if json.Unmarshal(b, &obj) != nil {
			if err == nil {
				t.Fatalf("got kind %d for %q, which is not an object", m.kind, b)
			}
			return
		}
		_, hasMethod := obj["method"]
		id, hasID := obj["id"]
		hasID = hasID && string(id) != "null"
		_, hasResult := obj["result"]
		_, hasError := obj["error"]
		classifiable := hasMethod || hasResult || (hasError && hasID)
		if !classifiable {
			if err == nil {
				t.Fatalf("got kind %d for unclassifiable %s", m.kind, b)
			}
			return
		}
		var method string
		if hasMethod && json.Unmarshal(obj["method"], &method) != nil {
			if err == nil {
				t.Fatalf("got no error for a non-string method in %s", b)
			}
			return
		}
		if err != nil {
			t.Fatalf("got error %v for valid %s", err, b)
		}
		if m.method != method {
			t.Fatalf("got method %q, want %q", m.method, method)
		}
		if hasID && !bytes.Equal(m.id, obj["id"]) {
			t.Fatalf("got id %s, want %s", m.id, obj["id"])
		}
		if p, ok := obj["params"]; ok && !bytes.Equal(m.params, p) {
			t.Fatalf("got params %s, want %s", m.params, p)
		}
		if r, ok := obj["result"]; ok && !bytes.Equal(m.result, r) {
			t.Fatalf("got result %s, want %s", m.result, r)
		}
	})
}

// FuzzProcessOutput checks that the hand-written process/output decoder agrees with
// encoding/json whenever it accepts its input.
func FuzzProcessOutput(f *testing.F) {
	for _, s := range []string{
		`{"processId":"p","seq":1,"stream":"stdout","chunk":"aGkK"}`,
		`{"chunk":"AAAA","stream":"pty","seq":0,"processId":"\u00e9"}`,
		`{"processId":"p","seq":01,"stream":"stdout","chunk":"aGk="}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var got protocol.ProcessOutputNotification
		if !decodeOutputFast(b, &got) {
			return
		}
		var want protocol.ProcessOutputNotification
		if err := json.Unmarshal(b, &want); err != nil {
			t.Fatalf("fast path accepted %s, encoding/json: %v", b, err)
		}
		if !reflect.DeepEqual(normalize(got), normalize(want)) {
			t.Fatalf("%s: got %+v, want %+v", b, got, want)
		}
	})
}

func ExampleNotification_ProcessOutput() {
	n := Notification{Method: "process/output", Params: json.RawMessage(`{"processId":"p","seq":1,"stream":"stdout","chunk":"aGkK"}`)}
	out, err := n.ProcessOutput()
	fmt.Printf("%s %d %s %q %v\n", out.ProcessID, out.Seq, out.Stream, out.Chunk, err)
	// Output: p 1 stdout "hi\n" <nil>
}
