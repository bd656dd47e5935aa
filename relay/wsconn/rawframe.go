package wsconn

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
	"net"
	"slices"
	"time"
)

// Binary frames a ws:// connection writes itself (issue 16).
//
// A client masks every frame it sends (RFC 6455 §5.3). coder/websocket masks a message
// through its 4 KiB write buffer, so a Noise record frame (≈ 61.5 KB) went to the socket
// through three copies: relay/frame's encoding into one buffer, the masking copy into the
// library's buffer, and the cork's batch (cork.go). On a dialled connection without TLS
// the cork is the connection the library writes to, so Conn writes its binary messages
// itself, as whole frames: header, mask key, and the masked bytes of the frame's parts
// (relay/frame.EncodeSplit: the frame's head and its record payload, which is never joined
// to it) in one pass into a pooled buffer, and that buffer in one write under the cork's
// lock. The library still writes the control frames (pings, pongs, close) through the cork,
// each in one write, so frames never interleave on the wire. With TLS (wss) the cork sits
// under the TLS layer, so the library writes every frame as before.
//
// An accepted connection (the rendezvous side) does the same with unmasked frames (the
// library's server path cost a context, a timer and two write syscalls per frame): byte 1
// without MASK, no key, and header, head and tail go out in one writev, with no copy
// (BenchmarkWriteRecordFrameAccepted: cheaper than copying into a pooled buffer).
//
//	byte 0     0x82              FIN, opcode 2 (binary)
//	byte 1     0x80 | len7       MASK, payload length ≤ 125, or 126 / 127
//	[2 | 8]    length            big-endian, only for len7 = 126 (≤ 65535) or 127
//	4 bytes    masking key       fresh from crypto/rand for every frame (§5.3)
//	payload    head ‖ tail       each byte XORed with key[i mod 4]

// maxFrameHeader is the longest header appendFrameHeader writes: 2 bytes, an 8-byte length
// and the 4-byte masking key.
const maxFrameHeader = 2 + 8 + 4

// appendFrameHeader appends the header of one binary frame with an n-byte payload: the
// length in its shortest form, and for a client frame (masked) the MASK bit and the key.
func appendFrameHeader(dst []byte, n int, masked bool, key [4]byte) []byte {
	var mask byte
	if masked {
		mask = 0x80
	}
	dst = append(dst, 0x82)
	switch {
	case n <= 125:
		dst = append(dst, mask|byte(n))
	case n <= 0xffff:
		dst = append(dst, mask|126)
		dst = binary.BigEndian.AppendUint16(dst, uint16(n))
	default:
		dst = append(dst, mask|127)
		dst = binary.BigEndian.AppendUint64(dst, uint64(n))
	}
	if masked {
		dst = append(dst, key[:]...)
	}
	return dst
}

// appendMaskedFrame appends one masked binary frame carrying head ‖ tail to dst.
func appendMaskedFrame(dst []byte, key [4]byte, head, tail []byte) []byte {
	n := len(head) + len(tail)
	dst = slices.Grow(dst, maxFrameHeader+n)
	dst = appendFrameHeader(dst, n, true, key)
	start := len(dst)
	dst = dst[:start+n]
	k := binary.LittleEndian.Uint32(key[:])
	maskCopy(dst[start:], head, k, 0)
	maskCopy(dst[start+len(head):], tail, k, len(head))
	return dst
}

// maskCopy writes src XOR the masking key into dst (len(dst) ≥ len(src)), src being the
// payload's bytes from offset pos on. key is the key's 4 bytes read little-endian.
func maskCopy(dst, src []byte, key uint32, pos int) {
	key = bits.RotateLeft32(key, -8*(pos&3)) // byte i of src takes key byte (pos+i) mod 4
	k := uint64(key) | uint64(key)<<32
	dst = dst[:len(src)]
	i := 0
	for ; i+32 <= len(src); i += 32 {
		d, s := dst[i:i+32], src[i:i+32]
		binary.LittleEndian.PutUint64(d[0:], binary.LittleEndian.Uint64(s[0:])^k)
		binary.LittleEndian.PutUint64(d[8:], binary.LittleEndian.Uint64(s[8:])^k)
		binary.LittleEndian.PutUint64(d[16:], binary.LittleEndian.Uint64(s[16:])^k)
		binary.LittleEndian.PutUint64(d[24:], binary.LittleEndian.Uint64(s[24:])^k)
	}
	for ; i+8 <= len(src); i += 8 {
		binary.LittleEndian.PutUint64(dst[i:], binary.LittleEndian.Uint64(src[i:])^k)
	}
	for ; i < len(src); i++ {
		dst[i] = src[i] ^ byte(key>>(8*(i&3)))
	}
}

// errWriteCanceled is the cause a raw write fails with when its ctx ends first.
var errWriteCanceled = errors.New("wsconn: write canceled")

// writeRaw sends head ‖ tail as one binary frame in one write to the cork, bounded by
// WriteTimeout and ctx (its deadline, and its cancellation through a past write deadline):
// on a dialled connection masked, built into a pooled buffer; on an accepted one unmasked,
// its header, head and tail in one writev (no copy). After an error the connection must
// be failed: part of the frame may be out.
func (c *Conn) writeRaw(ctx context.Context, head, tail []byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	deadline := time.Now().Add(c.opts.WriteTimeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	var err error
	stop := context.AfterFunc(ctx, c.cork.interruptWrite)
	if c.server {
		var hb [maxFrameHeader]byte
		bufs := net.Buffers{appendFrameHeader(hb[:0], len(head)+len(tail), false, [4]byte{}), head, tail}
		err = c.cork.writeBuffers(ctx, bufs, deadline)
	} else {
		err = c.writeMasked(ctx, head, tail, deadline)
	}
	if !stop() {
		// ctx ended during the write (whose deadline it may have cut short, or may yet cut
		// short the next one): the connection is failed either way.
		err = fmt.Errorf("%w: %w", errWriteCanceled, ctx.Err())
	}
	return err
}

// writeMasked builds head ‖ tail as one masked frame in a pooled buffer and writes it.
func (c *Conn) writeMasked(ctx context.Context, head, tail []byte, deadline time.Time) error {
	var key [4]byte
	if _, err := rand.Read(key[:]); err != nil {
		return fmt.Errorf("generating masking key: %w", err)
	}
	bp := corkPool.Get().(*[]byte)
	b := appendMaskedFrame((*bp)[:0], key, head, tail)
	err := c.cork.writeFrame(ctx, b, deadline)
	*bp = b[:0]
	corkPool.Put(bp)
	return err
}
