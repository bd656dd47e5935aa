package whatwg

import "strings"

// UpperHex is the digit set of percent-encoding.
const UpperHex = "0123456789ABCDEF"

// PercentDecode decodes %XX escapes; a '%' not followed by two hex digits stays literal.
func PercentDecode(s string) string {
	if strings.IndexByte(s, '%') < 0 {
		return s
	}
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]) {
			b = append(b, unhex(s[i+1])<<4|unhex(s[i+2]))
			i += 2
			continue
		}
		b = append(b, s[i])
	}
	return string(b)
}

func isHex(c byte) bool { return IsASCIIDigit(c) || (c|0x20 >= 'a' && c|0x20 <= 'f') }

func unhex(c byte) byte {
	if IsASCIIDigit(c) {
		return c - '0'
	}
	return c | 0x20 - 'a' + 10
}

// AppendPercent appends "%XX" for c.
func AppendPercent(dst []byte, c byte) []byte {
	return append(dst, '%', UpperHex[c>>4], UpperHex[c&0xF])
}

// PercentEncode encodes the bytes of s that are in set.
func PercentEncode(s string, set func(byte) bool) string {
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if set(s[i]) {
			b = AppendPercent(b, s[i])
			continue
		}
		b = append(b, s[i])
	}
	return string(b)
}

// The percent-encode sets (WHATWG URL §1.3), as predicates over one byte; every byte
// ≥ 0x7F is in each of them.

// InC0ControlSet is the C0 control percent-encode set.
func InC0ControlSet(c byte) bool { return c < 0x20 || c > 0x7E }

// InFragmentSet is the fragment percent-encode set.
func InFragmentSet(c byte) bool {
	return InC0ControlSet(c) || c == ' ' || c == '"' || c == '<' || c == '>' || c == '`'
}

// InQuerySet is the query percent-encode set.
func InQuerySet(c byte) bool {
	return InC0ControlSet(c) || c == ' ' || c == '"' || c == '#' || c == '<' || c == '>'
}

// InSpecialQuerySet is the special-query percent-encode set.
func InSpecialQuerySet(c byte) bool { return InQuerySet(c) || c == '\'' }

// InPathSet is the path percent-encode set.
func InPathSet(c byte) bool { return InQuerySet(c) || c == '?' || c == '`' || c == '{' || c == '}' }

// InUserinfoSet is the userinfo percent-encode set.
func InUserinfoSet(c byte) bool {
	return InPathSet(c) || c == '/' || c == ':' || c == ';' || c == '=' || c == '@' ||
		c >= '[' && c <= '^' || c == '|'
}

// InSpecialSegmentSet is the set rust-url encodes in one path segment of a special URL
// built from a native path (Url::from_file_path, path_segments_mut().push): the path set
// plus '%', '/' and '\'.
func InSpecialSegmentSet(c byte) bool { return InPathSet(c) || c == '%' || c == '/' || c == '\\' }
