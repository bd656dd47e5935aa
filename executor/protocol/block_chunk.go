package protocol

import (
	"bytes"
	"encoding/json"
	"sync"

	"github.com/execlab/executor/jsonwire"
)

// BlockChunk is fs/writeBlock's chunk: standard padded base64 on the wire, decoded with
// jsonwire.Bytes' rules and error texts. A chunk of at most blockChunkPooled bytes (every
// valid block: the wire maximum is 1 MiB) is decoded into a pooled buffer, so a stream of
// 1 MiB blocks does not allocate a fresh MiB per request; the handler calls Release once
// it has written Data. A BlockChunk that is never released is simply collected.
type BlockChunk struct {
	Data []byte
	buf  *[]byte // pooled storage of Data, nil when Data was allocated
}

// blockChunkPooled is the largest decoded chunk that uses the pool, in bytes (the wire
// maximum, capabilities-0.171.0.md §8.2), plus the base64 padding a decoder may need.
const blockChunkPooled = 1<<20 + 3

var blockChunkPool = sync.Pool{New: func() any { b := make([]byte, 0, blockChunkPooled); return &b }}

// getChunkBuf and putChunkBuf take and give back pooled chunk storage.
func getChunkBuf() *[]byte { return blockChunkPool.Get().(*[]byte) }

func putChunkBuf(bp *[]byte) {
	*bp = (*bp)[:0]
	blockChunkPool.Put(bp)
}

// UnmarshalJSON decodes a base64 JSON string. Plain strings whose decoded size fits the
// pool take the pooled path; anything else (escapes, larger chunks, other JSON types)
// goes through jsonwire.Bytes, which yields the reference's texts ("invalid type:
// number, expected a string", "Invalid symbol 33, offset 0.").
func (c *BlockChunk) UnmarshalJSON(raw []byte) error {
	if e := takeEarly(raw); e != nil {
		c.Data, c.buf = e.data, e.buf
		return nil
	}
	// The base64 decoder rejects '\\', so a string with escapes fails the pooled path and
	// is looked for only then (one pass less over a 1.4 MB chunk than checking first).
	if n := len(raw); n >= 2 && raw[0] == '"' && raw[n-1] == '"' && (n-2)/4*3 <= blockChunkPooled {
		bp := getChunkBuf()
		out, err := jsonwire.DecodeBase64Into((*bp)[:0], raw[1:n-1])
		if err == nil {
			c.Data, c.buf = out, bp
			return nil
		}
		putChunkBuf(bp)
		if bytes.IndexByte(raw[1:n-1], '\\') < 0 {
			return err
		}
	}
	var b jsonwire.Bytes
	if err := b.UnmarshalJSON(raw); err != nil {
		return err
	}
	c.Data = b
	return nil
}

// MarshalJSON encodes Data as a base64 JSON string.
func (c BlockChunk) MarshalJSON() ([]byte, error) { return jsonwire.Bytes(c.Data).AppendJSON(nil), nil }

// Release returns pooled storage; Data must not be used afterwards.
func (c *BlockChunk) Release() {
	if c.buf != nil {
		putChunkBuf(c.buf)
	}
	c.Data, c.buf = nil, nil
}

var _ json.Unmarshaler = (*BlockChunk)(nil)
