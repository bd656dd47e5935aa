package jsonwire_test

import (
	"testing"

	"github.com/execlab/executor/jsonwire"
)

func TestValidate(t *testing.T) {
	tests := []struct {
		in   string
		want string // "" = valid
	}{
		{`{"a":[1,2,{"b":null}]}`, ""},
		{` "s" `, ""},
		{`1e400`, ""},
		{`[] x`, "trailing characters at line 1 column 4"},
		{`{"a":1,"a":1}`, "duplicate JSON object key `a` at line 1 column 10"},
	}
	for _, tt := range tests {
		err := jsonwire.Validate([]byte(tt.in))
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != tt.want {
			t.Errorf("Validate(%q): got %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestScanRoot_Members(t *testing.T) {
	names := []string{"id", "method", "params"}
	data := []byte(` {"params" : {"id":1}, "x":[1], "m\u0065thod":"a", "id":7 } tail`)
	root, err := jsonwire.ScanRoot(data, names, make([]jsonwire.Member, 0, len(names)))
	if err != nil {
		t.Fatal(err)
	}
	if !root.Object || string(data[root.End:]) != " tail" {
		t.Fatalf("got Object=%v, rest %q; want an object ending before \" tail\"", root.Object, data[root.End:])
	}
	// Document order, escaped keys matched unescaped, nested "id" not captured.
	want := []struct {
		name int
		text string
	}{{2, `{"id":1}`}, {1, `"a"`}, {0, `7`}}
	if len(root.Members) != len(want) {
		t.Fatalf("got %d members, want %d", len(root.Members), len(want))
	}
	for i, w := range want {
		m := root.Members[i]
		if m.Name != w.name || string(data[m.Start:m.End]) != w.text {
			t.Errorf("member %d: got name %d %q, want %d %q", i, m.Name, data[m.Start:m.End], w.name, w.text)
		}
	}
	if err := jsonwire.CheckTrailing(data, root.End); err == nil || err.Error() != "trailing characters at line 1 column 61" {
		t.Errorf("CheckTrailing: got %v, want trailing characters at column 61", err)
	}
	if err := jsonwire.CheckTrailing([]byte("[] \n"), 2); err != nil {
		t.Errorf("CheckTrailing(whitespace): got %v, want nil", err)
	}
}

func TestScanRoot_NotObjectAndErrors(t *testing.T) {
	root, err := jsonwire.ScanRoot([]byte(`[{"id":1}]`), []string{"id"}, nil)
	if err != nil || root.Object || len(root.Members) != 0 {
		t.Errorf("array root: got %+v, %v; want no object, no members", root, err)
	}
	_, err = jsonwire.ScanRoot([]byte(`{"id":1,"id":2}`), []string{"id"}, nil)
	if _, ok := err.(*jsonwire.SyntaxError); !ok {
		t.Errorf("duplicate key: got %T %v, want *SyntaxError", err, err)
	}
}

func TestScanRoot_Allocations(t *testing.T) {
	names := []string{"id", "method", "params"}
	data := []byte(`{"id":12,"method":"process/read","params":{"processId":"proc-1","afterSeq":41}}`)
	allocs := testing.AllocsPerRun(100, func() {
		var buf [3]jsonwire.Member
		if _, err := jsonwire.ScanRoot(data, names, buf[:0]); err != nil {
			t.Fatal(err)
		}
	})
	if allocs > 0 && !raceEnabled {
		t.Errorf("ScanRoot: got %v allocs per run, want 0", allocs)
	}
}

func TestRequestID(t *testing.T) {
	tests := []struct{ in, want, err string }{
		{`7`, `7`, ""},
		{`-0`, `0`, ""},
		{`"a\u0041\/"`, `"aA/"`, ""},
		{`"plain"`, `"plain"`, ""},
		{`1.0`, "", "data did not match any variant of untagged enum RequestId"},
		{`18446744073709551615`, "", "data did not match any variant of untagged enum RequestId"},
		{`18446744073709551616`, "", "invalid type: integer `18446744073709551616` as u128, expected any value"},
		{`-9223372036854775809`, "", "invalid type: integer `-9223372036854775809` as i128, expected any value"},
		{`null`, "", "data did not match any variant of untagged enum RequestId"},
	}
	for _, tt := range tests {
		got, err := jsonwire.RequestID([]byte(tt.in))
		if tt.err != "" {
			if err == nil || err.Error() != tt.err {
				t.Errorf("RequestID(%s): got %q, %v; want error %q", tt.in, got, err, tt.err)
			}
			continue
		}
		if err != nil || string(got) != tt.want {
			t.Errorf("RequestID(%s): got %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
}

func TestDecodeAndString(t *testing.T) {
	var v struct {
		Code int64 `json:"code"`
	}
	if err := jsonwire.Decode([]byte(`{}`), &v); err == nil || err.Error() != "missing field `code`" {
		t.Errorf("Decode({}): got %v, want missing field `code` (no retry from null)", err)
	}
	if err := jsonwire.Decode([]byte(`{"code":1,"code":2}`), &v); err == nil {
		t.Error("Decode(duplicate key): got nil, want an error")
	}
	if s, err := jsonwire.String([]byte(`"a\nb"`)); err != nil || s != "a\nb" {
		t.Errorf("String: got %q, %v", s, err)
	}
	if _, err := jsonwire.String([]byte(`12`)); err == nil || err.Error() != "invalid type: number, expected a string" {
		t.Errorf("String(12): got %v, want invalid type: number", err)
	}
}

func TestUnexpected(t *testing.T) {
	tests := []struct{ in, want string }{
		{``, "null"},
		{` null `, "null"},
		{`true`, "boolean `true`"},
		{`false`, "boolean `false`"},
		{`-1.5e3`, "number"},
		{`[1]`, "sequence"},
		{`{"a":1}`, "map"},
		{`"x'y"`, `string "x'y"`},
		// Rust's Debug: \u{..} for control and grapheme-extending characters, short escapes.
		{`"a\u0001\u00e9\u0301\t\"\\"`, `string "a\u{1}é\u{301}\t\"\\"`},
		{`"unterminated`, "string"},
	}
	for _, tt := range tests {
		if got := jsonwire.Unexpected([]byte(tt.in)); got != tt.want {
			t.Errorf("Unexpected(%s): got %s, want %s", tt.in, got, tt.want)
		}
	}
}
