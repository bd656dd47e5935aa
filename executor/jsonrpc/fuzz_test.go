package jsonrpc_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/execlab/executor/executor/jsonrpc"
	"github.com/execlab/executor/jsonwire"
)

// jsonFacts describes the first JSON value of data with encoding/json, independently of
// the package's scanner: whether the whole input is valid, whether some object repeats
// a key, how many values it holds and how deep it nests.
func jsonFacts(data []byte) (valid, dup bool, values, depth int) {
	if !json.Valid(data) {
		return false, false, 0, 0
	}
	type level struct {
		obj     bool
		wantKey bool
		keys    map[string]bool
	}
	var stack []level
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	for {
		tok, err := d.Token()
		if err == io.EOF {
			return true, dup, values, depth
		}
		if err != nil {
			return false, false, 0, 0
		}
		if n := len(stack); n > 0 && stack[n-1].obj && stack[n-1].wantKey {
			if delim, ok := tok.(json.Delim); ok && delim == '}' {
				stack = stack[:n-1]
				continue
			}
			k := tok.(string)
			if stack[n-1].keys[k] {
				dup = true
			}
			stack[n-1].keys[k] = true
			stack[n-1].wantKey = false
			continue
		}
		switch tok {
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
			continue
		}
		values++
		if n := len(stack); n > 0 && stack[n-1].obj {
			stack[n-1].wantKey = true
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, level{obj: true, wantKey: true, keys: map[string]bool{}})
		case json.Delim('['):
			stack = append(stack, level{})
		}
		if len(stack) > depth {
			depth = len(stack)
		}
	}
}

func addSeeds(f *testing.F) {
	for _, s := range []string{
		`{"id":1,"method":"process/read","params":{"processId":"p","afterSeq":5}}`,
		`{"id":"x","method":"m","trace":{"traceparent":"00"}}`, `{"method":"initialized"}`,
		`{"id":3,"result":{}}`, `{"id":4,"error":{"code":-32600,"message":"m"}}`,
		`{"a":1,"a":2}`, `{"a":"\ud800\udc00\n"}`, `[[[[]]]]`, `{"id":1e400,"method":"m"}`, "not-json",
	} {
		f.Add([]byte(s))
	}
}

func FuzzParse(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		verr := jsonwire.Validate(data)
		m, perr := jsonrpc.Parse(data)
		if perr == nil {
			if verr != nil {
				t.Fatalf("Parse accepted what Validate rejects: %v", verr)
			}
			for _, raw := range [][]byte{m.Params, m.Result} {
				if raw != nil && !json.Valid(raw) {
					t.Fatalf("Parse returned invalid raw member %q", raw)
				}
			}
		}
		var se *jsonwire.SyntaxError
		if verr != nil && !errors.As(verr, &se) {
			t.Fatalf("Validate returned %T, want *SyntaxError", verr)
		}
		if !utf8.Valid(data) || verr != nil && strings.Contains(verr.Error(), "hex escape") {
			return // encoding/json tolerates invalid UTF-8 and lone surrogates; the reference does not
		}
		valid, dup, values, depth := jsonFacts(data)
		want := valid && !dup && values <= jsonwire.MaxValues && depth < jsonwire.MaxDepth
		if (verr == nil) != want {
			t.Fatalf("Validate: got %v; encoding/json says valid=%v dup=%v values=%d depth=%d", verr, valid, dup, values, depth)
		}
	})
}
