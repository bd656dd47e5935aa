package protocol_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/execlab/executor/executor/protocol"
	"github.com/execlab/executor/jsonwire"
)

// decodeOrInvalidParams decodes data into p and fails the fuzz run unless it either
// decodes or fails with a -32602 *jsonwire.Error. It reports whether it decoded.
func decodeOrInvalidParams(t *testing.T, data []byte, p any) bool {
	t.Helper()
	if err := jsonwire.UnmarshalParams(json.RawMessage(data), p); err != nil {
		var re *jsonwire.Error
		if !errors.As(err, &re) || re.Code != jsonwire.CodeInvalidParams || re.Message == "" {
			t.Fatalf("decode error %v is not a -32602 *jsonwire.Error", err)
		}
		return false
	}
	return true
}

func FuzzFsOpenParams(f *testing.F) {
	for _, s := range []string{
		`{"handleId":"h","path":"file:///tmp/x"}`,
		`{"handleId":"h","path":"file:///tmp/x","mode":"replace"}`,
		`{"handleId":"h","path":"file:///tmp/x","mode":{"read":null}}`,
		`{"handleId":"h","path":"file:///tmp/x","mode":{"replace":{}}}`,
		`{"handleId":"h","path":"file:///tmp/x","mode":null}`,
		`["h","file:///tmp/x","replace",null]`,
		`null`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var p protocol.FsOpenParams
		if !decodeOrInvalidParams(t, data, &p) {
			return
		}
		switch p.Mode {
		case "", protocol.FsOpenRead, protocol.FsOpenReplace:
		default:
			t.Fatalf("decoded unknown mode %q", p.Mode)
		}
		if again, err := protocol.ParsePathURI(string(p.Path)); err != nil || again != p.Path {
			t.Fatalf("path %q re-parses to %q, %v", p.Path, again, err)
		}
	})
}

func FuzzFsWriteBlockParams(f *testing.F) {
	for _, s := range []string{
		`{"handleId":"h","offset":0,"chunk":"YWJj"}`,
		`{"handleId":"h","offset":18446744073709551615,"chunk":"YQ=="}`,
		`{"handleId":"h","offset":-1,"chunk":"!"}`,
		`{"chunk":"x"}`,
		`["h",1,"Yg=="]`,
		`{"handleId":"h","offset":0,"chunk":"YQ==\n"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var p protocol.FsWriteBlockParams
		if !decodeOrInvalidParams(t, data, &p) {
			return
		}
		defer p.Chunk.Release()
		// What decodes re-encodes to the canonical base64 it came from.
		var raw struct {
			Chunk *string `json:"chunk"`
		}
		if json.Unmarshal(data, &raw) == nil && raw.Chunk != nil {
			if got := jsonwire.EncodeBase64(p.Chunk.Data); got != *raw.Chunk {
				t.Fatalf("chunk %q decoded to %d bytes that encode as %q", *raw.Chunk, len(p.Chunk.Data), got)
			}
		}
	})
}

func FuzzFsWatchMissingParams(f *testing.F) {
	for _, s := range []string{
		`{"watchId":1,"missing":["file:///tmp/a"]}`,
		`{"watchId":18446744073709551615,"missing":["file:///tmp/a","file:///C:/x"],"present":"file:///tmp"}`,
		`{"watchId":-1,"missing":[]}`,
		`{"watchId":"1","missing":["x"]}`,
		`[2,["file:///a"],null]`,
		`{"watchId":1,"missing":[1],"present":{}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var p protocol.FsWatchMissingParams
		if !decodeOrInvalidParams(t, data, &p) {
			return
		}
		paths := p.Missing
		if p.Present != nil {
			paths = append(paths, *p.Present)
		}
		for _, u := range paths {
			if again, err := protocol.ParsePathURI(string(u)); err != nil || again != u {
				t.Fatalf("path %q re-parses to %q, %v", u, again, err)
			}
		}
	})
}
