package fs_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/execlab/executor/executor/fs"
	"github.com/execlab/executor/jsonwire"
)

func TestDecodeHelperResponse(t *testing.T) {
	tests := []struct {
		in      string
		ok      string
		code    int
		message string
	}{
		{`{"ok":{"dataBase64":"aGkK"}}` + "\n", `{"dataBase64":"aGkK"}`, 0, ""},
		{`{"error":{"code":-32004,"message":"No such file or directory (os error 2)"}}`, "", -32004, "No such file or directory (os error 2)"},
		{`{}`, "", -32603, "failed to encode or decode fs sandbox helper message: response has neither ok nor error"},
		{`{"ok":null}`, "", -32603, "failed to encode or decode fs sandbox helper message: response has neither ok nor error"},
		{``, "", -32603, "failed to encode or decode fs sandbox helper message: unexpected end of JSON input"},
	}
	for _, tt := range tests {
		raw, err := fs.DecodeHelperResponse([]byte(tt.in))
		if tt.code == 0 {
			if err != nil || string(raw) != tt.ok {
				t.Errorf("%q: got %s %v, want %s", tt.in, raw, err, tt.ok)
			}
			continue
		}
		var re *jsonwire.Error
		if !errors.As(err, &re) || re.Code != tt.code || re.Message != tt.message {
			t.Errorf("%q: got %v, want %d %q", tt.in, err, tt.code, tt.message)
		}
	}
}

// FuzzDecodeHelperResponse: any helper output yields either a JSON result or a
// *jsonwire.Error, never a panic.
func FuzzDecodeHelperResponse(f *testing.F) {
	for _, s := range []string{`{"ok":{}}`, `{"error":{"code":-32600,"message":"x"}}`, `{"ok":[1,2]}`, `null`, `{"ok":1,"error":null}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		raw, err := fs.DecodeHelperResponse(in)
		if err != nil {
			var re *jsonwire.Error
			if !errors.As(err, &re) {
				t.Fatalf("got error %T %v, want *jsonwire.Error", err, err)
			}
			return
		}
		if !json.Valid(raw) {
			t.Fatalf("got invalid JSON result %q", raw)
		}
	})
}
