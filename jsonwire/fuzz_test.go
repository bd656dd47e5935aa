package jsonwire_test

import (
	"bytes"
	"encoding/base64"
	"errors"
	"strings"
	"testing"

	"github.com/execlab/executor/jsonwire"
)

func FuzzUnmarshalParams(f *testing.F) {
	for _, s := range []string{
		`{"name":"n","opt":null,"env":{"A":"1"},"list":[{"n":1}],"color":"red","blob":"aGk=","any":[1]}`,
		`["n",null]`, `{}`, `null`, `{"name":"n","color":{"red":null}}`, `{"name":"\u0041","u":18446744073709551615}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var k kitchen
		err := jsonwire.UnmarshalParams(data, &k)
		var u jsonwire.Unit
		uerr := jsonwire.UnmarshalParams(data, &u)
		for _, e := range []error{err, uerr} {
			if e == nil {
				continue
			}
			var rpcErr *jsonwire.Error
			if !errors.As(e, &rpcErr) || rpcErr.Message == "" {
				t.Fatalf("got %T %v, want a *jsonwire.Error with a message", e, e)
			}
		}
		if len(data) > 0 && jsonwire.Validate(data) != nil && (err == nil || uerr == nil) {
			t.Fatalf("invalid JSON %q decoded without error", data)
		}
	})
}

func FuzzDecodeBase64(f *testing.F) {
	for _, s := range []string{"", "aGk=", "aGk", "aG=k", "YR==", "a", "aGk=\n", "AAAA===="} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out, err := jsonwire.DecodeBase64(s)
		slow := jsonwire.Base64ErrorForTest(s)
		if (err == nil) != (slow == nil) {
			t.Fatalf("%q: DecodeBase64 error %v, reference-order check %v", s, err, slow)
		}
		if err == nil && jsonwire.EncodeBase64(out) != s {
			t.Fatalf("%q: decodes to %q, which re-encodes to %q", s, out, jsonwire.EncodeBase64(out))
		}
	})
}

func FuzzUnexpected(f *testing.F) {
	for _, s := range []string{``, `null`, `true`, `1e5`, `[]`, `{}`, `"a\u0001\u0301"`, `"unterminated`, `"\ud800"`, ` "x" y`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got := jsonwire.Unexpected(data) // must not panic on any input
		if got == "" {
			t.Fatalf("Unexpected(%q) is empty", data)
		}
		var s string
		if jsonwire.Validate(data) == nil && jsonwire.Decode(data, &s) == nil {
			if !strings.HasPrefix(got, `string "`) || !strings.HasSuffix(got, `"`) {
				t.Fatalf("Unexpected(%q) = %s, want a quoted string", data, got)
			}
		}
	})
}

// FuzzScanRoot: ScanRoot followed by CheckTrailing agrees with Validate, and every
// captured member is one valid JSON value.
func FuzzScanRoot(f *testing.F) {
	for _, s := range []string{`{"id":1,"method":"m","params":{"id":2}}`, `{"id":1} x`, `[{"id":1}]`,
		`{"i\u0064":"x","id":1}`, `{"id":[1,}`, ` {"method" : "a" } `, `"s"`} {
		f.Add([]byte(s))
	}
	names := []string{"id", "method", "params"}
	f.Fuzz(func(t *testing.T, data []byte) {
		verr := jsonwire.Validate(data)
		root, err := jsonwire.ScanRoot(data, names, nil)
		if err == nil {
			err = jsonwire.CheckTrailing(data, root.End)
		}
		if (err == nil) != (verr == nil) || err != nil && err.Error() != verr.Error() {
			t.Fatalf("ScanRoot+CheckTrailing: %v; Validate: %v", err, verr)
		}
		if len(root.Members) > len(names) || !root.Object && len(root.Members) > 0 {
			t.Fatalf("captured %d members (object %v)", len(root.Members), root.Object)
		}
		for _, m := range root.Members {
			if err := jsonwire.Validate(data[m.Start:m.End]); err != nil {
				t.Fatalf("member %d %q is not one JSON value: %v", m.Name, data[m.Start:m.End], err)
			}
		}
	})
}

// FuzzAppendBase64: the SIMD encoder appends exactly what encoding/base64 produces, after
// any prefix, for any input.
func FuzzAppendBase64(f *testing.F) {
	for _, s := range []string{"", "a", "hi", "abc", "0123456789abcdefghijklmnopqrstuvwxyz0123456789ABCDEF", "\x00\xff\xfe\x80"} {
		f.Add([]byte(s), []byte("pre"))
	}
	f.Fuzz(func(t *testing.T, b, prefix []byte) {
		got := jsonwire.AppendBase64(bytes.Clone(prefix), b)
		want := append(bytes.Clone(prefix), base64.StdEncoding.EncodeToString(b)...)
		if !bytes.Equal(got, want) {
			t.Fatalf("AppendBase64(%q, %x): got %q, want %q", prefix, b, got, want)
		}
	})
}
