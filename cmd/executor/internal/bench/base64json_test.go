package bench

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestB64JSON_Decode(t *testing.T) {
	tests := []struct {
		in      string
		want    []byte
		wantErr bool
	}{
		{`""`, []byte{}, false},
		{`"aGVsbG8="`, []byte("hello"), false},
		{`"aGVs\u0062G8="`, []byte("hello"), false}, // escaped: plain path
		{`"aGVsbG8"`, nil, true},                    // unpadded
		{`12`, nil, true},
		{`null`, nil, true},
	}
	for _, tc := range tests {
		var b b64JSON
		err := json.Unmarshal([]byte(tc.in), &b)
		if (err != nil) != tc.wantErr {
			t.Errorf("%s: got error %v, want error %v", tc.in, err, tc.wantErr)
			continue
		}
		if err == nil && !bytes.Equal(b.buf, tc.want) {
			t.Errorf("%s: got %q, want %q", tc.in, b.buf, tc.want)
		}
	}
}

func TestB64JSON_ReusesBufferWithoutStaleBytes(t *testing.T) {
	var r readBlockResult
	if err := json.Unmarshal([]byte(`{"chunk":"aGVsbG8gd29ybGQ=","eof":false}`), &r); err != nil {
		t.Fatal(err)
	}
	first := &r.Chunk.buf[0]
	r.Chunk.buf = r.Chunk.buf[:0]
	if err := json.Unmarshal([]byte(`{"chunk":"aGk=","eof":true}`), &r); err != nil {
		t.Fatal(err)
	}
	if string(r.Chunk.buf) != "hi" || !r.Eof {
		t.Errorf("got %q eof %v, want \"hi\" eof true", r.Chunk.buf, r.Eof)
	}
	if &r.Chunk.buf[0] != first {
		t.Errorf("got a new buffer, want the first one reused")
	}
}

// FuzzB64JSON checks b64JSON against the plain path: unquote with encoding/json, then
// decode with encoding/base64.
func FuzzB64JSON(f *testing.F) {
	for _, s := range []string{`""`, `"aGVsbG8="`, `"aGVs\u0062G8="`, `"aGVsbG8"`, `"a\/b="`, `null`, `"\"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		var b b64JSON
		err := json.Unmarshal(in, &b)
		if string(bytes.TrimSpace(in)) == "null" {
			if err == nil {
				t.Fatalf("%q: got no error, want one (a chunk is never null)", in)
			}
			return
		}
		var s string
		if json.Unmarshal(in, &s) != nil {
			if err == nil {
				t.Fatalf("%q: decoded %q, but it is not a JSON string", in, b.buf)
			}
			return
		}
		// The oracle is the reference's rule: strict standard base64 (canonical padding,
		// zero trailing bits) with no line breaks, which the stdlib would skip.
		want, werr := base64.StdEncoding.Strict().DecodeString(s)
		if strings.ContainsAny(s, "\r\n") {
			want, werr = nil, errors.New("line break")
		}
		if (err != nil) != (werr != nil) {
			t.Fatalf("%q: got error %v, want error %v", in, err, werr)
		}
		if err == nil && !bytes.Equal(b.buf, want) {
			t.Fatalf("%q: got %q, want %q", in, b.buf, want)
		}
	})
}
