package rustutf8

import (
	"fmt"
	"unicode/utf8"
)

// lead reports the encoded length of a sequence starting with c (a byte ≥ 0x80) and the
// range its second byte must fall in; w is 0 when c cannot start a sequence.
func lead(c byte) (w int, lo, hi byte) {
	lo, hi = 0x80, 0xBF
	switch {
	case c >= 0xC2 && c <= 0xDF:
		return 2, lo, hi
	case c == 0xE0:
		return 3, 0xA0, hi
	case c >= 0xE1 && c <= 0xEC, c == 0xEE, c == 0xEF:
		return 3, lo, hi
	case c == 0xED:
		return 3, lo, 0x9F
	case c == 0xF0:
		return 4, 0x90, hi
	case c >= 0xF1 && c <= 0xF3:
		return 4, lo, hi
	case c == 0xF4:
		return 4, lo, 0x8F
	}
	return 0, lo, hi
}

// Lossy mirrors Rust's String::from_utf8_lossy: each maximal invalid subpart of s becomes
// one U+FFFD. A valid s is returned as is.
func Lossy(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	out := make([]byte, 0, len(s)+8)
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r != utf8.RuneError || n > 1 {
			out = append(out, s[i:i+n]...)
			i += n
			continue
		}
		out = append(out, "\uFFFD"...)
		i += invalidPrefixLen(s[i:])
	}
	return string(out)
}

// invalidPrefixLen returns the length of the maximal prefix of s that starts a valid UTF-8
// sequence but does not complete it (at least 1).
func invalidPrefixLen(s string) int {
	w, lo, hi := lead(s[0])
	if w == 0 {
		return 1
	}
	n := 1
	for k := 0; k < w-1 && n < len(s); k++ {
		b := s[n]
		if k == 0 && (b < lo || b > hi) || k > 0 && (b < 0x80 || b > 0xBF) {
			break
		}
		n++
	}
	return n
}

// ErrorText validates b as Rust's str::from_utf8 does and renders its Utf8Error:
// "invalid utf-8 sequence of N bytes from index I" when N bytes form an invalid sequence,
// "incomplete utf-8 byte sequence from index I" when the input ends inside one. ok is
// false when b is valid.
func ErrorText(b []byte) (text string, ok bool) {
	for i := 0; i < len(b); {
		c := b[i]
		if c < 0x80 {
			i++
			continue
		}
		n, incomplete := invalidSequence(b[i:])
		switch {
		case incomplete:
			return fmt.Sprintf("incomplete utf-8 byte sequence from index %d", i), true
		case n > 0:
			return fmt.Sprintf("invalid utf-8 sequence of %d bytes from index %d", n, i), true
		}
		w, _, _ := lead(c)
		i += w
	}
	return "", false
}

// invalidSequence checks the multi-byte sequence at the start of b (b[0] >= 0x80) with
// Rust's rules (core::str::validations::run_utf8_validation): it returns the error length
// n (1 to 3) of an invalid sequence, incomplete when b ends first, or 0, false when the
// sequence is valid.
func invalidSequence(b []byte) (n int, incomplete bool) {
	w, lo, hi := lead(b[0])
	if w == 0 {
		return 1, false
	}
	if len(b) < 2 {
		return 0, true
	}
	if b[1] < lo || b[1] > hi {
		return 1, false
	}
	for i := 2; i < w; i++ {
		if i >= len(b) {
			return 0, true
		}
		if b[i]&0xC0 != 0x80 {
			return i, false
		}
	}
	return 0, false
}
