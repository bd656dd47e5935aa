package jsonwire_test

import (
	"errors"
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
