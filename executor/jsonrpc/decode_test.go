package jsonrpc_test

import (
	"bytes"
	"testing"

	"github.com/execlab/executor/executor/jsonrpc"
	"github.com/execlab/executor/jsonwire"
)

func TestParse_Classification(t *testing.T) {
	tests := []struct {
		in     string
		kind   jsonrpc.Kind
		id     string
		method string
		params string
		result string
		err    *jsonwire.Error
	}{
		{in: `{"id":1,"method":"m","params":{"a":1}}`, kind: jsonrpc.KindRequest, id: "1", method: "m", params: `{"a":1}`},
		{in: `{"jsonrpc":"2.0","id":"7","method":"m"}`, kind: jsonrpc.KindRequest, id: `"7"`, method: "m"},
		{in: `{"method":"initialized","params":{}}`, kind: jsonrpc.KindNotification, method: "initialized", params: "{}"},
		{in: `{"method":"n","params":null}`, kind: jsonrpc.KindNotification, method: "n", params: "null"},
		{in: `{"id":3,"result":{}}`, kind: jsonrpc.KindResponse, id: "3", result: "{}"},
		{in: `{"id":3,"result":null,"error":5}`, kind: jsonrpc.KindResponse, id: "3", result: "null"},
		{in: `{"id":4,"error":{"code":-32600,"message":"bad","data":[1]}}`, kind: jsonrpc.KindError, id: "4",
			err: &jsonwire.Error{Code: -32600, Message: "bad", Data: []byte("[1]")}},
		{in: `{"id":6,"error":{"code":-32603,"data":{"kind":"spawnNotFound"},"message":"m"}}`, kind: jsonrpc.KindError, id: "6",
			err: &jsonwire.Error{Code: -32603, Message: "m", Data: []byte(`{"kind":"spawnNotFound"}`)}},
		{in: `{"id":7,"error":{"code":1,"message":"m","data":null}}`, kind: jsonrpc.KindError, id: "7",
			err: &jsonwire.Error{Code: 1, Message: "m"}},
		{in: `{"error":{"code":-0,"message":"m"},"id":5}`, kind: jsonrpc.KindError, id: "5",
			err: &jsonwire.Error{Code: 0, Message: "m"}},
		{in: ` {"id":1,"method":"m","params":1e400,"trace":{"traceparent":"00-x"}} ` + "\n", kind: jsonrpc.KindRequest,
			id: "1", method: "m", params: "1e400"},
		{in: `{"id":1,"method":"m\u00e9","trace":["tp",null]}`, kind: jsonrpc.KindRequest, id: "1", method: "mé"},
		{in: `{"method":"m","id":-9223372036854775808}`, kind: jsonrpc.KindRequest, id: "-9223372036854775808", method: "m"},
		{in: `{"id":-0,"method":"m"}`, kind: jsonrpc.KindRequest, id: "0", method: "m"},
		{in: `{"id":"a\/b\u00e9\n\u0001","method":"m"}`, kind: jsonrpc.KindRequest, id: `"a/bé\n\u0001"`, method: "m"},
		{in: `{"id":"<>&\u2028","method":"m"}`, kind: jsonrpc.KindRequest, id: "\"<>&\u2028\"", method: "m"},
	}
	for _, tt := range tests {
		m, err := jsonrpc.Parse([]byte(tt.in))
		if err != nil {
			t.Errorf("Parse(%s): got error %v", tt.in, err)
			continue
		}
		if m.Kind != tt.kind || m.ID.String() != tt.id || m.Method != tt.method ||
			string(m.Params) != tt.params || string(m.Result) != tt.result {
			t.Errorf("Parse(%s):\n got  kind=%v id=%s method=%q params=%s result=%s\n want kind=%v id=%s method=%q params=%s result=%s",
				tt.in, m.Kind, m.ID, m.Method, m.Params, m.Result, tt.kind, tt.id, tt.method, tt.params, tt.result)
		}
		if (m.Error == nil) != (tt.err == nil) || m.Error != nil && (m.Error.Code != tt.err.Code || m.Error.Message != tt.err.Message || string(m.Error.Data) != string(tt.err.Data)) {
			t.Errorf("Parse(%s): got error member %+v, want %+v", tt.in, m.Error, tt.err)
		}
		if tt.params == "" && m.Params != nil {
			t.Errorf("Parse(%s): got params %q, want nil (absent)", tt.in, m.Params)
		}
	}
}

func TestParse_ShapeErrors(t *testing.T) {
	tests := []struct{ in, want string }{
		{"[]", "expected a JSON-RPC object"},
		{`[{"id":1,"method":"m"}]`, "expected a JSON-RPC object"},
		{"null", "expected a JSON-RPC object"},
		{"[] x", "expected a JSON-RPC object"},
		{"{}", "missing field `error`"},
		{`{"id":1}`, "missing field `error`"},
		{`{"error":{"code":1,"message":"m"}}`, "missing field `id`"},
		{`{"result":1}`, "missing field `id`"},
		{`{"a":1} x`, "missing field `error`"},
		{`{"method":1}`, "invalid type: number, expected a string"},
		{`{"id":1,"method":null}`, "invalid type: null, expected a string"},
		{`{"id":1,"error":{}}`, "missing field `code`"},
		{`{"id":1,"error":{"code":1}}`, "missing field `message`"},
		{`{"id":1,"error":5}`, "invalid type: number, expected struct JSONRPCErrorError"},
		{`{"id":1,"error":[1,"m"]}`, "invalid length 2, expected struct JSONRPCErrorError with 3 elements"},
		{`{"id":1,"error":{"code":1.5,"message":"m"}}`, "invalid number"},
		{`{"id":1,"error":{"code":"x","message":"m"}}`, `invalid type: string "x", expected i64`},
		{`{"id":1,"method":"m","trace":1}`, "invalid type: number, expected struct W3cTraceContext"},
		{`{"id":1,"method":"m","trace":{"traceparent":5}}`, "invalid type: number, expected a string"},
		{`{"id":1,"method":"m","trace":[null,null,null]}`, "invalid length 3, expected fewer elements in array"},
		{`{"id":null,"method":"x"} x`, "data did not match any variant of untagged enum RequestId"},
		{`{"method":5,"id":null}`, "invalid type: number, expected a string"},
		{`{"id":null,"method":5}`, "data did not match any variant of untagged enum RequestId"},
	}
	for _, tt := range tests {
		_, err := jsonrpc.Parse([]byte(tt.in))
		if err == nil || err.Error() != tt.want {
			t.Errorf("Parse(%s): got %v, want %q", tt.in, err, tt.want)
		}
	}
}

func TestParse_RequestIDs(t *testing.T) {
	const noVariant = "data did not match any variant of untagged enum RequestId"
	tests := []struct{ id, want string }{
		{"null", noVariant}, {"1.5", noVariant}, {"1.0", noVariant}, {"1e2", noVariant}, {"-1.5", noVariant},
		{"{}", noVariant}, {"[]", noVariant}, {"true", noVariant}, {"1e400", noVariant},
		{"9223372036854775808", noVariant}, {"18446744073709551615", noVariant},
		{"18446744073709551616", "invalid type: integer `18446744073709551616` as u128, expected any value"},
		{"340282366920938463463374607431768211455", "invalid type: integer `340282366920938463463374607431768211455` as u128, expected any value"},
		{"340282366920938463463374607431768211456", noVariant},
		{"-9223372036854775809", "invalid type: integer `-9223372036854775809` as i128, expected any value"},
		{"-170141183460469231731687303715884105728", "invalid type: integer `-170141183460469231731687303715884105728` as i128, expected any value"},
		{"-170141183460469231731687303715884105729", noVariant},
	}
	for _, tt := range tests {
		_, err := jsonrpc.Parse([]byte(`{"id":` + tt.id + `,"method":"m"}`))
		if err == nil || err.Error() != tt.want {
			t.Errorf("id %s: got %v, want %q", tt.id, err, tt.want)
		}
	}
}

func TestParse_Allocations(t *testing.T) {
	small := []byte(`{"id":12,"method":"process/read","params":{"processId":"proc-1","afterSeq":41,"waitMs":30000}}`)
	big := bigWrite()
	for _, tt := range []struct {
		name string
		msg  []byte
		max  float64
	}{{"small", small, 2}, {"4MiB", big, 2}} {
		runs := 20
		if raceEnabled {
			tt.max += 2 // a dropped pooled scanner costs the scanner and its stack
			// The race detector makes sync.Pool drop a random share of Puts, so the mean
			// over 20 runs swings (2 to 5 seen for "small" on Go 1.27.3); over 500 it
			// holds at 3. The 4 MiB message keeps 20: each run costs ~0.1 s under -race.
			if len(tt.msg) < 1<<10 {
				runs = 500
			}
		}
		got := testing.AllocsPerRun(runs, func() {
			if _, err := jsonrpc.Parse(tt.msg); err != nil {
				t.Fatal(err)
			}
		})
		if got > tt.max {
			t.Errorf("Parse(%s): got %v allocs, want at most %v", tt.name, got, tt.max)
		}
	}
}

func TestParse_ParamsAliasInput(t *testing.T) {
	msg := []byte(`{"id":1,"method":"m","params":[1,2]}`)
	m, err := jsonrpc.Parse(msg)
	if err != nil {
		t.Fatal(err)
	}
	i := bytes.Index(msg, []byte("[1,2]"))
	if &m.Params[0] != &msg[i] {
		t.Errorf("Params: got a copy, want a sub-slice of the input (no re-encoding)")
	}
}
