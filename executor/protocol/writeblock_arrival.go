package protocol

// Decoding fs/writeBlock's chunk while the request arrives (jsonrpc.Arrival; issue 28,
// writeblock_local in docs/bench.md).
//
// A 1 MiB block is 1,398,104 base64 symbols. WriteBlockArrival looks at the first bytes
// of a message for the method and the chunk's key, then decodes the chunk's symbols into
// a pooled buffer read by read, four at a time, holding back the last quad until the
// closing quote shows which quad is the padded one. When the whole string has decoded it
// reports the string's body (every byte a base64 symbol, so the envelope scan may skip
// it) and an EarlyChunk.
//
// Nothing here decides what the request means. The chunk key is found by looking for
// its text, which can be wrong (a "chunk" key in another object, a method named after
// the params); that costs a wasted decode, never a wrong result: BlockChunk.UnmarshalJSON
// takes the EarlyChunk only when the string the params decoder hands it is the very
// string decoded here (same address, same length). Any irregularity (a symbol outside
// the alphabet, padding before the end, an escape, a chunk larger than a block, no
// closing quote within the message) abandons the early decode, and the normal path then
// decodes the string and produces the reference's error text. The decode is strict
// base64 either way: decoding the string in aligned pieces plus a padded tail accepts
// exactly the strings a whole-string decode accepts, with the same bytes.

import (
	"bytes"
	"sync"

	"github.com/execlab/executor/jsonwire"
)

// arrivalMin is the smallest message prefix WriteBlockArrival looks at: smaller
// messages (and chunks of a few KiB) gain nothing from decoding early.
const arrivalMin = 16 << 10

// arrivalHead is how far into a message the method and the chunk key are looked for.
const arrivalHead = 4 << 10

// arrivalStep is the fewest symbols decoded at once before the closing quote arrives.
const arrivalStep = 16 << 10

var (
	arrivalMethod = []byte(`"method":"` + MethodFsWriteBlock + `"`)
	arrivalChunk  = []byte(`"chunk":"`)
)

// arrival states.
const (
	arrivalLooking  = iota // the chunk key has not been seen yet
	arrivalDecoding        // decoding symbols from pos
	arrivalDone            // the closing quote is at end and everything decoded
	arrivalOff             // not an fs/writeBlock with a chunk to decode, or abandoned
)

// WriteBlockArrival decodes fs/writeBlock chunks while requests arrive; it implements
// jsonrpc.Arrival (Seen, Arrived) for one connection's read loop and is not safe for
// concurrent use. The zero value is ready.
type WriteBlockArrival struct {
	state int
	start int // offset of the chunk's first symbol in the message
	pos   int // offset of the first symbol not decoded yet
	end   int // offset of the closing quote (arrivalDone)
	buf   *[]byte
	out   []byte // decoded so far, in *buf
}

// Seen implements jsonrpc.Arrival: decode what has arrived.
func (a *WriteBlockArrival) Seen(sofar []byte) {
	if a.state == arrivalLooking {
		if len(sofar) < arrivalMin {
			return
		}
		a.find(sofar)
	}
	if a.state == arrivalDecoding {
		a.decode(sofar, false)
	}
}

// Arrived implements jsonrpc.Arrival: finish the message and hand over its chunk (held:
// the pooled buffer's capacity).
func (a *WriteBlockArrival) Arrived(data []byte) (jsonwire.KnownString, any, int) {
	defer a.reset()
	if data == nil {
		return jsonwire.KnownString{}, nil, 0
	}
	if a.state == arrivalLooking && len(data) >= arrivalMin {
		a.find(data) // the message came in one read
	}
	if a.state == arrivalDecoding {
		a.decode(data, true)
	}
	if a.state != arrivalDone {
		return jsonwire.KnownString{}, nil, 0
	}
	e := &EarlyChunk{body: &data[a.start], n: a.end - a.start, data: a.out, buf: a.buf}
	a.buf, a.out = nil, nil
	return jsonwire.KnownString{Start: a.start, End: a.end}, e, cap(e.data)
}

// reset readies a for the next message, giving back storage not handed over.
func (a *WriteBlockArrival) reset() {
	if a.buf != nil {
		putChunkBuf(a.buf)
	}
	*a = WriteBlockArrival{}
}

// find looks for the method and the chunk key in the message's head.
func (a *WriteBlockArrival) find(sofar []byte) {
	head := sofar[:min(len(sofar), arrivalHead)]
	if !bytes.Contains(head, arrivalMethod) {
		a.state = arrivalOff
		return
	}
	i := bytes.Index(head, arrivalChunk)
	if i < 0 {
		a.state = arrivalOff
		return
	}
	a.start = i + len(arrivalChunk)
	a.pos = a.start
	a.buf = getChunkBuf()
	a.out = (*a.buf)[:0]
	a.state = arrivalDecoding
}

// decode decodes the symbols that have arrived past pos. Before the closing quote it
// decodes whole quads in steps of at least arrivalStep, keeping the last quad back (it
// may be the padded final one); once the quote is there it decodes the rest with the
// final-quad rules. final: sofar is the whole message.
func (a *WriteBlockArrival) decode(sofar []byte, final bool) {
	body := sofar[a.pos:]
	q := bytes.IndexByte(body, '"')
	if q < 0 {
		if final {
			a.abandon()
			return
		}
		n := (len(body) - 4) / 4 * 4
		if n < arrivalStep {
			return
		}
		a.decodePart(body[:n], false)
		return
	}
	a.decodePart(body[:q], true)
	if a.state == arrivalDecoding {
		a.end = a.pos
		a.state = arrivalDone
	}
}

// decodePart appends the decoding of part (symbols from pos) to out, or abandons. A part
// that is not the last must decode to three bytes per four symbols (no padding).
func (a *WriteBlockArrival) decodePart(part []byte, last bool) {
	n := len(part) / 4 * 3
	if len(part)%4 != 0 || len(a.out)+n > blockChunkPooled || (last && len(a.out)+n == 0) {
		a.abandon()
		return
	}
	dst := a.out[len(a.out):len(a.out):cap(a.out)]
	got, err := jsonwire.DecodeBase64Into(dst, part)
	if err != nil || (!last && len(got) != n) {
		a.abandon()
		return
	}
	a.out = a.out[:len(a.out)+len(got)]
	a.pos += len(part)
}

// abandon stops decoding this message; the normal path decodes it.
func (a *WriteBlockArrival) abandon() {
	if a.buf != nil {
		putChunkBuf(a.buf)
	}
	a.buf, a.out = nil, nil
	a.state = arrivalOff
}

// EarlyChunk is a chunk WriteBlockArrival decoded while its request arrived: the decoded
// bytes of the string whose body starts at body and is n bytes long.
type EarlyChunk struct {
	body *byte
	n    int
	data []byte
	buf  *[]byte
}

// release gives the storage back unused.
func (e *EarlyChunk) release() {
	if e.buf != nil {
		putChunkBuf(e.buf)
	}
	e.buf, e.data = nil, nil
}

// earlyChunks holds the EarlyChunks of the params being decoded by WithEarly, keyed by
// the address of the chunk string's first symbol inside its message: a message's bytes
// are one live buffer, so no two decodes share a key.
var earlyChunks sync.Map

// WithEarly runs decode (the params decoding of the request) with early, the value an
// Arrival decoded while the request arrived (jsonrpc.Message.Early): a BlockChunk whose
// JSON string is the very one the EarlyChunk was decoded from takes its bytes instead of
// decoding them again. An early that is not an *EarlyChunk, or that no BlockChunk takes,
// changes nothing (its storage is given back).
func WithEarly(early any, decode func() error) error {
	e, ok := early.(*EarlyChunk)
	if !ok || e == nil || e.body == nil {
		return decode()
	}
	earlyChunks.Store(e.body, e)
	defer func() {
		if _, left := earlyChunks.LoadAndDelete(e.body); left {
			e.release()
		}
	}()
	return decode()
}

// takeEarly returns the EarlyChunk of the JSON string raw, if WithEarly holds one for
// exactly that string.
func takeEarly(raw []byte) *EarlyChunk {
	if len(raw) < 3 {
		return nil
	}
	v, ok := earlyChunks.Load(&raw[1])
	if !ok {
		return nil
	}
	e := v.(*EarlyChunk)
	if len(raw) != e.n+2 || raw[0] != '"' {
		return nil
	}
	if _, mine := earlyChunks.LoadAndDelete(&raw[1]); !mine {
		return nil
	}
	return e
}
