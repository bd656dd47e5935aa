package jsonwire

// Byte strings travel as standard base64 with padding (spec/jsonrpc.md §1.5, §3.3).
//
// Decoding follows the reference's decoder (the Rust base64 crate's STANDARD engine,
// canonical padding required, trailing bits rejected) and reproduces its error texts:
//
//	Invalid symbol <byte>, offset <i>.        a byte outside the alphabet, or a misplaced '='
//	Invalid input length: <n>                 one lone symbol in the final quad
//	Invalid padding                           a final quad without its canonical '=' padding
//	Invalid last symbol <byte>, offset <i>.   the final symbol carries non-zero unused bits
//
// Whitespace, line breaks, the URL-safe alphabet and unpadded input are all rejected.
// Valid input takes the strict SIMD decoder (simdStrict); only failures run the slower
// reference-order check that names the error.

import (
	"encoding/base64"
	"slices"
	"strconv"

	simdbase64 "github.com/segmentio/asm/base64"
)

// simdStrict decodes strict standard padded base64 with github.com/segmentio/asm/base64
// (issue 16): its AVX2 loop takes 32 input bytes at a time while every one is in the
// alphabet and hands the rest (the padded tail, or everything from the first byte outside
// the alphabet: '=', '\r', '\n', anything else) to encoding/base64's strict decoder, so
// it accepts and produces exactly what base64.StdEncoding.Strict() does
// (TestDecodeBase64Into_MatchesStdlib, FuzzDecodeBase64). Every process/output chunk a
// client receives decodes here; encoding/base64 decoded ~0.7 GB/s on the bench machine
// and was the largest user-space cost of the harness on relay_stream (docs/bench.md).
var simdStrict = simdbase64.StdEncoding.Strict()

// DecodeBase64 decodes standard padded base64 exactly as the reference does and returns
// the reference's error text on failure (see the file comment). It is safe for
// concurrent use.
func DecodeBase64(s string) ([]byte, error) {
	return decodeBase64([]byte(s))
}

// decodeBase64 is DecodeBase64 over bytes; src is not retained.
func decodeBase64(src []byte) ([]byte, error) {
	return DecodeBase64Into(nil, src)
}

// DecodeBase64Into is DecodeBase64 over bytes that decodes into dst's storage when it
// is large enough (dst[:0] is reused; pass nil for a fresh slice) and returns the
// decoded bytes. src is not retained. This is the one base64 decoder of the module:
// the server's params, the fs/writeFile payload and the clients' output chunks all
// decode here, so they cannot drift apart.
func DecodeBase64Into(dst, src []byte) ([]byte, error) {
	n := simdStrict.DecodedLen(len(src))
	out := dst[:0]
	if cap(out) < n {
		out = make([]byte, n)
	}
	out = out[:n]
	// The stdlib skips '\r' and '\n'; the reference does not. A decode that skipped any
	// consumed fewer symbols than src holds, and canonical padded base64 of k bytes is
	// exactly EncodedLen(k) symbols, so the length check rejects them without a scan.
	if k, err := simdStrict.Decode(out, src); err == nil && simdStrict.EncodedLen(k) == len(src) {
		return out[:k], nil
	}
	if err := base64Error(src); err != nil {
		return nil, err
	}
	// Unreachable unless the two decoders disagree; fail closed with the reference's
	// most generic text rather than return nil, nil.
	return nil, base64Errorf("Invalid padding")
}

// EncodeBase64 returns the standard padded base64 encoding of b.
func EncodeBase64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

// AppendBase64 appends the standard padded base64 encoding of b to dst, growing dst at
// most once.
//
// It encodes with github.com/segmentio/asm/base64, the one third-party module of this
// package, for speed alone (issue 16): every byte of process output, fs/readBlock and
// http body deltas is encoded here, and its AVX2 encoder runs ~14× faster than
// encoding/base64 on the bench machine (4.9 GB/s against 0.34 GB/s, 256 KiB blocks),
// which made base64 the largest user-space cost of streaming stdout (docs/bench.md). It
// falls back to encoding/base64 without AVX2 or on short inputs, and its output is the
// standard encoding byte for byte (TestAppendBase64_MatchesStdlib, FuzzAppendBase64).
// Decoding (DecodeBase64Into) uses the same module's strict decoder and the reference's
// error rules.
func AppendBase64(dst, b []byte) []byte {
	n := simdStd.EncodedLen(len(b))
	dst = slices.Grow(dst, n)
	out := dst[len(dst) : len(dst)+n]
	simdStd.Encode(out, b)
	return dst[:len(dst)+n]
}

// simdStd is the padded standard alphabet of the SIMD encoder.
var simdStd = simdbase64.StdEncoding

// base64Error names why src does not decode, checking in the reference decoder's order:
// a lone invalid last byte of a 4n+1 input first, then every quad but the last from the
// left, then the final (possibly partial) quad. It returns nil for valid input.
func base64Error(src []byte) error {
	n := len(src)
	rem := n % 4
	if rem == 1 && src[n-1] != '=' && !isBase64Symbol(src[n-1]) {
		return invalidSymbol(n-1, src[n-1])
	}
	// Every complete quad except the last one, which may carry padding.
	body := n - rem
	if rem == 0 && body >= 4 {
		body -= 4
	}
	for i := 0; i < body; i++ {
		if !isBase64Symbol(src[i]) {
			return invalidSymbol(i, src[i])
		}
	}
	// The final quad.
	symbols, pads, firstPad := 0, 0, 0
	var last byte
	var acc uint32
	for i := body; i < n; i++ {
		c := src[i]
		if c == '=' {
			if i-body < 2 {
				return invalidSymbol(i, c)
			}
			if pads == 0 {
				firstPad = i
			}
			pads++
			continue
		}
		if pads > 0 {
			return invalidSymbol(firstPad, '=')
		}
		if !isBase64Symbol(c) {
			return invalidSymbol(i, c)
		}
		last = c
		acc |= uint32(base64Value(c)) << (26 - 6*symbols)
		symbols++
	}
	if n > 0 && symbols < 2 {
		return base64Errorf("Invalid input length: " + strconv.Itoa(body+symbols))
	}
	if (pads+symbols)%4 != 0 {
		return base64Errorf("Invalid padding")
	}
	// Bits beyond the whole output bytes must be zero.
	whole := symbols * 6 / 8
	if acc&(^uint32(0)>>(whole*8)) != 0 {
		return base64Errorf("Invalid last symbol " + strconv.Itoa(int(last)) + ", offset " + strconv.Itoa(body+symbols-1) + ".")
	}
	return nil
}

type base64Errorf string

func (e base64Errorf) Error() string { return string(e) }

func invalidSymbol(offset int, c byte) error {
	return base64Errorf("Invalid symbol " + strconv.Itoa(int(c)) + ", offset " + strconv.Itoa(offset) + ".")
}

func isBase64Symbol(c byte) bool {
	return c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '+' || c == '/'
}

func base64Value(c byte) byte {
	switch {
	case c >= 'A' && c <= 'Z':
		return c - 'A'
	case c >= 'a' && c <= 'z':
		return c - 'a' + 26
	case c >= '0' && c <= '9':
		return c - '0' + 52
	case c == '+':
		return 62
	default:
		return 63
	}
}
