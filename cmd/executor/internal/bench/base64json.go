package bench

import (
	"bytes"
	"encoding/json"
	"errors"

	"github.com/execlab/executor/jsonwire"
)

// b64JSON is a JSON string holding standard padded base64, decoded straight from the JSON
// text into buf (reused when it is large enough) without first unquoting it into a Go
// string. The chunks of fs/readBlock and http/request/bodyDelta are up to 1 MiB, and the
// bench's client shares one machine with the executors; decoding them the plain way
// (string, then base64) was a large part of the bench process's CPU time, which it would
// otherwise add to both sides' samples alike, pulling every ratio toward 1.
type b64JSON struct{ buf []byte }

var errNotBase64String = errors.New("base64 member is not a JSON string")

// UnmarshalJSON decodes the string; escapes (never sent by either executor) take the plain
// path.
func (b *b64JSON) UnmarshalJSON(data []byte) error {
	if len(data) < 2 || data[0] != '"' || data[len(data)-1] != '"' {
		return errNotBase64String
	}
	s := data[1 : len(data)-1]
	if bytes.IndexByte(s, '\\') >= 0 {
		var str string
		if err := json.Unmarshal(data, &str); err != nil {
			return err
		}
		s = []byte(str)
	}
	out, err := jsonwire.DecodeBase64Into(b.buf, s)
	if err != nil {
		return err
	}
	b.buf = out
	return nil
}

// readBlockResult is protocol.FsReadBlockResult with the chunk decoded by b64JSON.
type readBlockResult struct {
	Chunk b64JSON `json:"chunk"`
	Eof   bool    `json:"eof"`
}

// bodyDelta is protocol.HTTPBodyDelta with the delta decoded by b64JSON.
type bodyDelta struct {
	RequestID string  `json:"requestId"`
	Seq       uint64  `json:"seq"`
	Delta     b64JSON `json:"deltaBase64"`
	Done      bool    `json:"done"`
	Error     *string `json:"error"`
}
