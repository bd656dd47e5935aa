package harness

import (
	"context"
	"encoding/json"
	"strconv"
	"sync"

	"github.com/execlab/executor/executor/protocol"
	"github.com/execlab/executor/jsonwire"
)

// WriteBlock sends fs/writeBlock for handleID (opened by fs/open) and waits for its
// response: data is written at offset. It is Call(ctx, "fs/writeBlock",
// protocol.FsWriteBlockParams{...}, nil) without encoding/json: the request is appended,
// base64 included, into one pooled buffer and sent as one message, byte for byte what
// Call would send (TestWriteBlock_MatchesCall). It costs the harness a fraction of Call's
// CPU for large blocks (issue 28, writeblock_local). data is not retained. A JSON-RPC
// error response is returned as *RPCError.
func (c *Client) WriteBlock(ctx context.Context, handleID string, offset uint64, data []byte) error {
	id := c.nextID.Add(1)
	bp := writeBlockBufs.Get().(*[]byte)
	msg := appendWriteBlockRequest((*bp)[:0], id, handleID, offset, data)
	_, err := c.roundTrip(ctx, protocol.MethodFsWriteBlock, id, msg)
	if cap(msg) <= maxPooledWriteBlock {
		*bp = msg[:0]
		writeBlockBufs.Put(bp)
	}
	return err
}

// maxPooledWriteBlock is the largest request buffer WriteBlock keeps for reuse: a 1 MiB
// block (the wire maximum) with its envelope, with room to spare.
const maxPooledWriteBlock = 2 << 20

var writeBlockBufs = sync.Pool{New: func() any { return new([]byte) }}

// appendWriteBlockRequest appends
// {"id":id,"method":"fs/writeBlock","params":{"handleId":…,"offset":…,"chunk":"base64"}},
// growing b at most once.
func appendWriteBlockRequest(b []byte, id int64, handleID string, offset uint64, data []byte) []byte {
	const head = `{"id":,"method":"` + protocol.MethodFsWriteBlock + `","params":{"handleId":,"offset":,"chunk":""}}`
	n := len(head) + 20 + 6*len(handleID) + 20 + (len(data)+2)/3*4
	if cap(b)-len(b) < n {
		nb := make([]byte, len(b), len(b)+n)
		copy(nb, b)
		b = nb
	}
	b = append(b, `{"id":`...)
	b = strconv.AppendInt(b, id, 10)
	b = append(b, `,"method":"`+protocol.MethodFsWriteBlock+`","params":{"handleId":`...)
	b = appendJSONString(b, handleID)
	b = append(b, `,"offset":`...)
	b = strconv.AppendUint(b, offset, 10)
	b = append(b, `,"chunk":"`...)
	b = jsonwire.AppendBase64(b, data)
	return append(b, `"}}`...)
}

// appendJSONString appends s as encoding/json encodes a string: plain printable ASCII
// as is, anything else (escapes, HTML characters, non-ASCII) through json.Marshal.
func appendJSONString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			m, _ := json.Marshal(s) // a string always marshals
			return append(b, m...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}
