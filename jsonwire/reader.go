package jsonwire

// Cursor over JSON text that the scanner has already validated. Nothing here reports
// syntax errors: callers must only hand it text that passed scanner.scan (Parse and
// UnmarshalParams guarantee that), and the helpers then never read out of bounds.

import (
	"bytes"
	"encoding/binary"
	"sync"
	"unicode/utf8"
)

var scannerPool = sync.Pool{New: func() any { return &scanner{frames: make([]frame, 0, 16)} }}

func getScanner(data []byte, names []string) *scanner {
	s := scannerPool.Get().(*scanner)
	s.reset(data, names)
	return s
}

func putScanner(s *scanner) {
	if cap(s.keys) > 4096 || cap(s.scratch) > 64<<10 {
		return // do not pin the memory of one pathological message
	}
	s.data = nil
	s.names = nil
	for i := range s.frames[:cap(s.frames)] {
		s.frames[:cap(s.frames)][i].set = nil
	}
	scannerPool.Put(s)
}

// reader walks validated JSON. pos is the offset of the next unread byte.
type reader struct {
	data []byte
	pos  int
	// known is a checked string body of data (UnmarshalCheckedParamsKnown); the zero
	// value names none.
	known KnownString
}

func (r *reader) skipWS() {
	for r.pos < len(r.data) {
		switch r.data[r.pos] {
		case ' ', '\n', '\t', '\r':
			r.pos++
		default:
			return
		}
	}
}

// peek returns the first byte of the next value after whitespace.
func (r *reader) peek() byte {
	r.skipWS()
	return r.data[r.pos]
}

// isNull consumes a null at the cursor if there is one.
func (r *reader) isNull() bool {
	if r.peek() == 'n' {
		r.pos += len("null")
		return true
	}
	return false
}

// plainSkip8 reports whether none of the 8 bytes in x is '"' or '\\'.
func plainSkip8(x uint64) bool {
	quote := x ^ (lanes01 * '"')
	bslash := x ^ (lanes01 * '\\')
	t := ((quote - lanes01) &^ quote) | ((bslash - lanes01) &^ bslash)
	return t&lanes80 == 0
}

// stringRaw consumes the string at the cursor and returns its raw contents (between
// the quotes) and whether they contain escapes.
func (r *reader) stringRaw() (raw []byte, escaped bool) {
	r.skipWS()
	data := r.data
	i := r.pos + 1
	start := i
	// The first '"' ends the string unless a backslash precedes it: two IndexByte
	// passes (SIMD) beat the 8-byte loop below many times over on long strings such as
	// the base64 of an fs/writeBlock chunk (issue 28).
	if q := bytes.IndexByte(data[start:], '"'); q >= 0 && !slowStringsForTest && bytes.IndexByte(data[start:start+q], '\\') < 0 {
		r.pos = start + q + 1
		return data[start : start+q], false
	}
	for {
		for i+8 <= len(data) && plainSkip8(binary.LittleEndian.Uint64(data[i:])) {
			i += 8
		}
		switch data[i] {
		case '"':
			r.pos = i + 1
			return data[start:i], escaped
		case '\\':
			escaped = true
			i += 2
		default:
			i++
		}
	}
}

// skipString consumes the string at the cursor (checked input) without reporting whether
// it has escapes: one IndexByte pass to each '"', which ends the string unless an odd run
// of backslashes precedes it. skip uses it for values handed to a json.Unmarshaler, such
// as fs/writeBlock's 1.4 MB base64 chunk (one pass less than stringRaw).
func (r *reader) skipString() {
	if slowStringsForTest {
		r.stringRaw()
		return
	}
	data := r.data
	start := r.pos + 1
	if start == r.known.Start && r.known.End > 0 {
		r.pos = r.known.End + 1
		return
	}
	for i := start; ; {
		q := bytes.IndexByte(data[i:], '"')
		if q < 0 { // not reached on checked input
			r.pos = len(data)
			return
		}
		end := i + q
		k := end
		for k > start && data[k-1] == '\\' {
			k--
		}
		if (end-k)%2 == 0 {
			r.pos = end + 1
			return
		}
		i = end + 1
	}
}

// str consumes the string at the cursor and returns it decoded.
func (r *reader) str() string {
	raw, escaped := r.stringRaw()
	if !escaped {
		return string(raw)
	}
	return string(appendUnescaped(make([]byte, 0, len(raw)), raw))
}

// number consumes the number at the cursor and returns its text.
func (r *reader) number() []byte {
	r.skipWS()
	start := r.pos
	for r.pos < len(r.data) {
		switch c := r.data[r.pos]; {
		case isDigit(c), c == '-', c == '+', c == '.', c == 'e', c == 'E':
			r.pos++
		default:
			return r.data[start:r.pos]
		}
	}
	return r.data[start:r.pos]
}

// skip consumes the value at the cursor and returns its text.
func (r *reader) skip() []byte {
	r.skipWS()
	start := r.pos
	depth := 0
	for {
		switch c := r.data[r.pos]; c {
		case '"':
			r.skipString()
		case '{', '[':
			depth++
			r.pos++
		case '}', ']':
			depth--
			r.pos++
		case ',', ':', ' ', '\n', '\t', '\r':
			r.pos++
			continue
		case 't', 'n':
			r.pos += 4
		case 'f':
			r.pos += 5
		default:
			r.number()
		}
		if depth == 0 {
			return r.data[start:r.pos]
		}
	}
}

// objectNext advances inside an object: call it right after '{' was consumed and after
// each member value. It consumes the next key and colon and returns the key's raw bytes,
// or ok=false after consuming the closing brace.
func (r *reader) objectNext() (key []byte, escaped, ok bool) {
	r.skipWS()
	if r.data[r.pos] == ',' {
		r.pos++
		r.skipWS()
	}
	if r.data[r.pos] == '}' {
		r.pos++
		return nil, false, false
	}
	key, escaped = r.stringRaw()
	r.skipWS()
	r.pos++ // ':'
	return key, escaped, true
}

// arrayNext advances inside an array: call it right after '[' was consumed and after
// each element. It reports whether another element follows (and stops at its first
// byte), or consumes the closing bracket and returns false.
func (r *reader) arrayNext() bool {
	r.skipWS()
	if r.data[r.pos] == ',' {
		r.pos++
		r.skipWS()
	}
	if r.data[r.pos] == ']' {
		r.pos++
		return false
	}
	return true
}

// appendUnescaped appends the decoded form of validated raw string contents to dst.
func appendUnescaped(dst, raw []byte) []byte {
	for i := 0; i < len(raw); {
		c := raw[i]
		if c != '\\' {
			j := i + 1
			for j < len(raw) && raw[j] != '\\' {
				j++
			}
			dst = append(dst, raw[i:j]...)
			i = j
			continue
		}
		e := raw[i+1]
		i += 2
		switch e {
		case 'b':
			dst = append(dst, '\b')
		case 'f':
			dst = append(dst, '\f')
		case 'n':
			dst = append(dst, '\n')
		case 'r':
			dst = append(dst, '\r')
		case 't':
			dst = append(dst, '\t')
		case 'u':
			n, _ := decodeHex4(raw[i:])
			i += 4
			if n >= 0xD800 && n <= 0xDBFF {
				n2, _ := decodeHex4(raw[i+2:])
				i += 6
				n = 0x10000 + (n-0xD800)<<10 + (n2 - 0xDC00)
			}
			dst = utf8.AppendRune(dst, n)
		default: // '"', '\\', '/'
			dst = append(dst, e)
		}
	}
	return dst
}
