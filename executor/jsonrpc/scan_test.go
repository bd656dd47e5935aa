package jsonrpc_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/execlab/executor/executor/jsonrpc"
	"github.com/execlab/executor/jsonwire"
)

// Syntax-level details, as the reference (codex 0.169.0) reports them.
func TestParse_SyntaxDetails(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{"not-json", "expected ident at line 1 column 2"},
		{"", "EOF while parsing a value at line 1 column 0"},
		{"\t\r\n", "EOF while parsing a value at line 2 column 0"},
		{"{", "EOF while parsing an object at line 1 column 1"},
		{"[", "EOF while parsing a list at line 1 column 1"},
		{`{"a":1,}`, "trailing comma at line 1 column 8"},
		{`[1,]`, "trailing comma at line 1 column 4"},
		{`{a:1}`, "key must be a string at line 1 column 2"},
		{`{"a" 1}`, "expected `:` at line 1 column 6"},
		{`{"a":[1 2]}`, "expected `,` or `]` at line 1 column 9"},
		{`{"a":-1x}`, "expected `,` or `}` at line 1 column 8"},
		{`{"a":fals}`, "expected ident at line 1 column 10"},
		{`{"a":t`, "EOF while parsing a value at line 1 column 6"},
		{`{"a":01}`, "invalid number at line 1 column 7"},
		{`{"a":-`, "EOF while parsing a value at line 1 column 6"},
		{`{"a":1.}`, "invalid number at line 1 column 8"},
		{`{"a":1.`, "EOF while parsing a value at line 1 column 7"},
		{`{"a":1.5e+}`, "invalid number at line 1 column 11"},
		{`{"a":+1}`, "expected value at line 1 column 6"},
		{"{\"a\":\"\x01\"}", "control character (\\u0000-\\u001F) found while parsing a string at line 1 column 7"},
		{`{"a":"\q"}`, "invalid escape at line 1 column 8"},
		{`{"a":"\u12"}`, "invalid escape at line 1 column 12"},
		{`{"a":"ab\u00`, "EOF while parsing a string at line 1 column 12"},
		{`{"a":"\ud800"}`, "unexpected end of hex escape at line 1 column 13"},
		{`{"a":"\ud800\"}`, "unexpected end of hex escape at line 1 column 14"},
		{`{"a":"\ud800\u0041"}`, "lone leading surrogate in hex escape at line 1 column 18"},
		{`{"a":"\udc00"}`, "lone leading surrogate in hex escape at line 1 column 12"},
		{"{\"id\":1,\"method\":\"zz\",\"x\":\"\xff\\n\"}", "invalid unicode code point at line 1 column 31"},
		{"{\"id\":1,\"method\":\"zz\",\"x\":\"\xff\\q\"}", "invalid escape at line 1 column 30"},
		{"\ufeff{}", "expected value at line 1 column 1"},
		{`{"id":1,"method":"x"} x`, "trailing characters at line 1 column 23"},
		{"{\"id\":1,\"method\":\"zz\", \"b\":[0,0]} \n \n  x", "trailing characters at line 3 column 3"},
		{`{"a":1,"a":2}`, "duplicate JSON object key `a` at line 1 column 10"},
		{`{"b":{"a":1,"a":2}}`, "duplicate JSON object key `a` at line 1 column 15"},
		{`{"a":1,"a"}`, "duplicate JSON object key `a` at line 1 column 11"},
		{`{"a":1,"a"   :2}`, "duplicate JSON object key `a` at line 1 column 13"},
		{`{"a":1,"\u0061":2}`, "duplicate JSON object key `a` at line 1 column 15"},
		{"\n\n  {\"a\":1,\n  \"a\" :2}", "duplicate JSON object key `a` at line 4 column 6"},
		{`{"é":1,"é":2}`, "duplicate JSON object key `é` at line 1 column 12"},
		{`{"a\nb":1,"a\nb":2}`, "duplicate JSON object key `a\nb` at line 1 column 16"},
		{"[" + strings.Repeat("[", 127), "recursion limit exceeded at line 1 column 128"},
		{strings.Repeat("[", 100000), "recursion limit exceeded at line 1 column 128"},
		{strings.Repeat(`{"a":`, 128) + "1" + strings.Repeat("}", 128), "recursion limit exceeded at line 1 column 636"},
	}
	for _, tt := range tests {
		_, err := jsonrpc.Parse([]byte(tt.in))
		if err == nil || err.Error() != tt.want {
			t.Errorf("Parse(%.60q): got %v, want %q", tt.in, err, tt.want)
		}
		var se *jsonwire.SyntaxError
		if err != nil && !errors.As(err, &se) {
			t.Errorf("Parse(%.60q): got %T, want *SyntaxError", tt.in, err)
		}
	}
}

// zerosRequest builds a request whose params array holds n zeros: 4 + n values.
func zerosRequest(n int, tail string) (msg []byte, prefix int) {
	const head = `{"id":1,"method":"zz","params":[`
	var b strings.Builder
	b.WriteString(head)
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('0')
	}
	b.WriteString(tail)
	return []byte(b.String()), len(head)
}

func TestParse_ValueBudget(t *testing.T) {
	// Exactly MaxValues values (root, id, method, params and the zeros) are accepted.
	msg, _ := zerosRequest(jsonwire.MaxValues-4, "]}")
	if _, err := jsonrpc.Parse(msg); err != nil {
		t.Fatalf("Parse(at budget): got %v, want success", err)
	}
	// One more fails at the offset of the first value over budget.
	msg, prefix := zerosRequest(jsonwire.MaxValues-3, "]}")
	_, err := jsonrpc.Parse(msg)
	want := "JSON-RPC message exceeds the limit of 262144 JSON values at line 1 column 524312"
	if err == nil || err.Error() != want {
		t.Fatalf("Parse(over budget): got %v, want %q", err, want)
	}
	if got := prefix + 2*(jsonwire.MaxValues-4); !strings.HasSuffix(want, " "+itoa(got)) {
		t.Fatalf("test arithmetic: value offset %d not in %q", got, want)
	}
	tests := []struct {
		tail, want string
	}{
		{",\n  \"x\"]}", "JSON-RPC message exceeds the limit of 262144 JSON values at line 2 column 2"},
		{",}", "JSON-RPC message exceeds the limit of 262144 JSON values at line 1 column 524312"},
		{",]}", "trailing comma at line 1 column 524313"},
		{",", "EOF while parsing a value at line 1 column 524312"},
		// serde_json positions the error after the array's end check: ',' and blanks.
		{",,  x]}", "JSON-RPC message exceeds the limit of 262144 JSON values at line 1 column 524315"},
	}
	for _, tt := range tests {
		msg, _ := zerosRequest(jsonwire.MaxValues-4, tt.tail)
		if _, err := jsonrpc.Parse(msg); err == nil || err.Error() != tt.want {
			t.Errorf("Parse(zeros + %q): got %v, want %q", tt.tail, err, tt.want)
		}
	}
	// In an object the end check consumes a closing brace (observed from codex 0.169.0).
	var o strings.Builder
	o.WriteString(`{"id":1,"method":"zz","params":{"x":[`)
	o.WriteString(strings.TrimSuffix(strings.Repeat("0,", jsonwire.MaxValues-5), ","))
	o.WriteString(`],"k":  }}`)
	want = "JSON-RPC message exceeds the limit of 262144 JSON values at line 1 column 524323"
	if _, err := jsonrpc.Parse([]byte(o.String())); err == nil || err.Error() != want {
		t.Errorf("Parse(object member over budget): got %v, want %q", err, want)
	}
	// Containers count too; keys do not.
	var b strings.Builder
	b.WriteString(`{"id":1,"method":"zz","params":{`)
	for i := 0; i < jsonwire.MaxValues-4; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`"k` + itoa(i) + `":{}`)
	}
	b.WriteString("}}")
	if _, err := jsonrpc.Parse([]byte(b.String())); err != nil {
		t.Errorf("Parse(%d empty objects): got %v, want success", jsonwire.MaxValues-4, err)
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

func TestParse_BigStringIsOneValue(t *testing.T) {
	msg := []byte(`{"id":1,"method":"zz","params":"` + strings.Repeat("A", 8<<20) + `"}`)
	m, err := jsonrpc.Parse(msg)
	if err != nil {
		t.Fatalf("Parse(8 MiB string): got %v", err)
	}
	if got, want := len(m.Params), 8<<20+2; got != want {
		t.Errorf("len(Params): got %d, want %d", got, want)
	}
}

func TestParse_LargeObjectDuplicate(t *testing.T) {
	// Past the linear-search size the set must still catch repeats, early and late.
	var b strings.Builder
	b.WriteString("{")
	for i := 0; i < 100; i++ {
		b.WriteString(`"k` + itoa(i) + `":0,`)
	}
	b.WriteString(`"k3":1}`)
	_, err := jsonrpc.Parse([]byte(b.String()))
	if err == nil || !strings.HasPrefix(err.Error(), "duplicate JSON object key `k3` at line 1 column ") {
		t.Errorf("Parse(101 keys, k3 repeated): got %v, want duplicate key k3", err)
	}
}
