package jsonwire

// Scanner tokens: literals, numbers and strings, with serde_json's grammar and error
// sites (see scan.go for how positions are reported). Numbers are checked but never
// converted, so out-of-range magnitudes such as 1e400 are valid here
// (spec/jsonrpc.md §1.3). Strings are skipped eight bytes at a time while no byte needs
// a closer look.

import (
	"bytes"
	"encoding/binary"
	"unicode/utf8"
)

// scanIdent checks the literal word at s.pos, whose first byte already matched.
func (s *scanner) scanIdent(word string) error {
	s.pos++
	for i := 1; i < len(word); i++ {
		if s.pos >= len(s.data) {
			return s.errAt(errEOFValue)
		}
		c := s.data[s.pos]
		s.pos++
		if c != word[i] {
			return s.errAt(errExpectedIdent)
		}
	}
	return nil
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// scanNumber checks a number with serde_json's grammar and error sites. Its magnitude is
// never converted: out-of-range numbers are valid here (spec/jsonrpc.md §1.3).
// A state machine over the number grammar (sign, integer, fraction, exponent), exempt
// from the complexity bound.
func (s *scanner) scanNumber() error {
	data := s.data
	if data[s.pos] == '-' {
		s.pos++
	}
	if s.pos >= len(data) {
		return s.errAt(errEOFValue)
	}
	c := data[s.pos]
	s.pos++
	switch {
	case c == '0':
		if s.pos < len(data) && isDigit(data[s.pos]) {
			return s.errPeek(errInvalidNumber)
		}
	case c >= '1' && c <= '9':
		for s.pos < len(data) && isDigit(data[s.pos]) {
			s.pos++
		}
	default:
		return s.errAt(errInvalidNumber)
	}
	if s.pos < len(data) && data[s.pos] == '.' {
		s.pos++
		if s.pos >= len(data) {
			return s.errPeek(errEOFValue)
		}
		if !isDigit(data[s.pos]) {
			return s.errPeek(errInvalidNumber)
		}
		for s.pos < len(data) && isDigit(data[s.pos]) {
			s.pos++
		}
	}
	if s.pos < len(data) && (data[s.pos] == 'e' || data[s.pos] == 'E') {
		s.pos++
		if s.pos < len(data) && (data[s.pos] == '+' || data[s.pos] == '-') {
			s.pos++
		}
		if s.pos >= len(data) {
			return s.errAt(errEOFValue)
		}
		c := data[s.pos]
		s.pos++
		if !isDigit(c) {
			return s.errAt(errInvalidNumber)
		}
		for s.pos < len(data) && isDigit(data[s.pos]) {
			s.pos++
		}
	}
	return nil
}

// SWAR constants: one byte lane per bit pattern.
const (
	lanes01 = 0x0101010101010101
	lanes80 = 0x8080808080808080
)

// longPlainString is the length from which scanString first tries a string as plain:
// found its closing quote and its lack of backslashes with bytes.IndexByte (SIMD), then
// checks it for control and non-ASCII bytes 32 at a time. That is several times faster
// than the 8-byte loop on long strings (the base64 of an fs/writeBlock chunk, issue 28);
// a string that is not plain is scanned again by the loop, which reports its errors.
const longPlainString = 64

// slowStringsForTest turns the fast paths of scanString and reader.stringRaw off, so
// that tests can compare them with the loops they shortcut.
var slowStringsForTest = false

// plainASCII reports whether b holds only bytes 0x20 to 0x7f. A lane at 0x20 or above
// subtracts 0x20 without borrowing, so only a control or non-ASCII byte sets a high bit.
func plainASCII(b []byte) bool {
	for len(b) >= 32 {
		x0 := binary.LittleEndian.Uint64(b)
		x1 := binary.LittleEndian.Uint64(b[8:])
		x2 := binary.LittleEndian.Uint64(b[16:])
		x3 := binary.LittleEndian.Uint64(b[24:])
		t := (x0 - lanes01*0x20) | x0 | (x1 - lanes01*0x20) | x1 | (x2 - lanes01*0x20) | x2 | (x3 - lanes01*0x20) | x3
		if t&lanes80 != 0 {
			return false
		}
		b = b[32:]
	}
	for _, c := range b {
		if c < 0x20 || c >= 0x80 {
			return false
		}
	}
	return true
}

// plainString8 reports whether none of the 8 bytes in x ends or complicates a string
// scan: no '"', no '\\', no control byte, no non-ASCII byte.
func plainString8(x uint64) bool {
	quote := x ^ (lanes01 * '"')
	bslash := x ^ (lanes01 * '\\')
	t := (x - lanes01*0x20) | (quote - lanes01) | (bslash - lanes01) | x
	return t&lanes80 == 0
}

// scanString checks the string whose opening quote was just consumed and leaves s.pos
// after the closing quote. It reports whether the string contains escapes.
func (s *scanner) scanString() (escaped bool, err error) {
	data := s.data
	i := s.pos
	if i == s.known.Start && s.known.End > 0 {
		s.pos = s.known.End + 1
		return false, nil
	}
	if q := bytes.IndexByte(data[i:], '"'); q >= longPlainString && !slowStringsForTest && bytes.IndexByte(data[i:i+q], '\\') < 0 && plainASCII(data[i:i+q]) {
		s.pos = i + q + 1
		return false, nil
	}
	badUTF8 := false
	for {
		for i+8 <= len(data) && plainString8(binary.LittleEndian.Uint64(data[i:])) {
			i += 8
		}
		if i >= len(data) {
			s.pos = len(data)
			return escaped, s.errAt(errEOFString)
		}
		c := data[i]
		switch {
		case c == '"':
			s.pos = i + 1
			if badUTF8 {
				return escaped, s.errAt(errInvalidUnicode)
			}
			return escaped, nil
		case c == '\\':
			escaped = true
			s.pos = i + 1
			if err := s.scanEscape(); err != nil {
				return escaped, err
			}
			i = s.pos
		case c < 0x20:
			s.pos = i + 1
			return escaped, s.errAt(errControlChar)
		case c >= utf8.RuneSelf:
			r, size := utf8.DecodeRune(data[i:])
			if r == utf8.RuneError && size == 1 {
				badUTF8 = true
			}
			i += size
		default:
			i++
		}
	}
}

// scanEscape checks the escape whose backslash was just consumed.
func (s *scanner) scanEscape() error {
	data := s.data
	if s.pos >= len(data) {
		return s.errAt(errEOFString)
	}
	c := data[s.pos]
	s.pos++
	switch c {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return nil
	case 'u':
	default:
		return s.errAt(errInvalidEscape)
	}
	n, err := s.hex4()
	if err != nil {
		return err
	}
	switch {
	case n >= 0xDC00 && n <= 0xDFFF:
		return s.errAt(errLoneLeadingSurrogate)
	case n < 0xD800 || n > 0xDBFF:
		return nil
	}
	// A leading surrogate must be followed by an escaped trailing one.
	if s.pos >= len(data) {
		return s.errAt(errEOFString)
	}
	if data[s.pos] != '\\' {
		s.pos++
		return s.errAt(errUnexpectedEndOfHex)
	}
	s.pos++
	if s.pos >= len(data) {
		return s.errAt(errEOFString)
	}
	if data[s.pos] != 'u' {
		s.pos++
		return s.errAt(errUnexpectedEndOfHex)
	}
	s.pos++
	n2, err := s.hex4()
	if err != nil {
		return err
	}
	if n2 < 0xDC00 || n2 > 0xDFFF {
		return s.errAt(errLoneLeadingSurrogate)
	}
	return nil
}

// hex4 reads the four hex digits of a \u escape.
func (s *scanner) hex4() (rune, error) {
	if len(s.data)-s.pos < 4 {
		s.pos = len(s.data)
		return 0, s.errAt(errEOFString)
	}
	n, ok := decodeHex4(s.data[s.pos:])
	s.pos += 4
	if !ok {
		return 0, s.errAt(errInvalidEscape)
	}
	return n, nil
}

func decodeHex4(b []byte) (rune, bool) {
	var n rune
	for _, c := range b[:4] {
		var d byte
		switch {
		case c >= '0' && c <= '9':
			d = c - '0'
		case c >= 'a' && c <= 'f':
			d = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			d = c - 'A' + 10
		default:
			return 0, false
		}
		n = n<<4 | rune(d)
	}
	return n, true
}
