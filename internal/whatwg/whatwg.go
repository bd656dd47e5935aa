package whatwg

import (
	"strings"
)

// Error is a url::ParseError; its text is rust-url's message.
type Error string

func (e Error) Error() string { return string(e) }

// url::ParseError texts (rust-url).
const (
	ErrRelativeWithoutBase Error = "relative URL without a base"
	ErrEmptyHost           Error = "empty host"
	ErrIdna                Error = "invalid international domain name"
	ErrInvalidPort         Error = "invalid port number"
	ErrInvalidIPv4         Error = "invalid IPv4 address"
	ErrInvalidIPv6         Error = "invalid IPv6 address"
)

// SpecialSchemes maps the WHATWG special schemes other than file to their default ports.
var SpecialSchemes = map[string]uint16{"http": 80, "https": 443, "ws": 80, "wss": 443, "ftp": 21}

// Trim does what the parser does before parsing: strip leading and trailing C0 controls and
// spaces, and remove every tab and newline.
func Trim(s string) string {
	s = strings.TrimFunc(s, func(r rune) bool { return r <= ' ' })
	if strings.ContainsAny(s, "\t\n\r") {
		s = strings.NewReplacer("\t", "", "\n", "", "\r", "").Replace(s)
	}
	return s
}

// SplitScheme returns the scheme as written (callers lower-case it: the parser does) and
// the remainder after its ':'. ok is false when s does not start with a scheme.
func SplitScheme(s string) (scheme, rest string, ok bool) {
	if s == "" || !IsASCIIAlpha(s[0]) {
		return "", "", false
	}
	for i := 1; i < len(s); i++ {
		c := s[i]
		switch {
		case IsASCIIAlpha(c) || IsASCIIDigit(c) || c == '+' || c == '-' || c == '.':
		case c == ':':
			return s[:i], s[i+1:], true
		default:
			return "", "", false
		}
	}
	return "", "", false
}

// ParsePort parses a port: ASCII digits, at most 65535; "" is absent (0, true).
func ParsePort(p string) (uint16, bool) {
	n := 0
	for i := 0; i < len(p); i++ {
		if !IsASCIIDigit(p[i]) {
			return 0, false
		}
		n = n*10 + int(p[i]-'0')
		if n > 0xFFFF {
			return 0, false
		}
	}
	return uint16(n), true
}

// IsSlash reports a path separator of a special URL.
func IsSlash(c byte) bool { return c == '/' || c == '\\' }

// IsASCIIAlpha reports an ASCII letter.
func IsASCIIAlpha(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }

// IsASCIIDigit reports an ASCII digit.
func IsASCIIDigit(c byte) bool { return c >= '0' && c <= '9' }

// IsWindowsDriveLetter reports "X:" or "X|".
func IsWindowsDriveLetter(s string) bool {
	return len(s) == 2 && IsASCIIAlpha(s[0]) && (s[1] == ':' || s[1] == '|')
}

// IsNormalizedDriveLetter reports "X:".
func IsNormalizedDriveLetter(s string) bool {
	return len(s) == 2 && IsASCIIAlpha(s[0]) && s[1] == ':'
}

// IsSingleDotSegment reports "." or "%2e" (any case).
func IsSingleDotSegment(s string) bool { return s == "." || strings.EqualFold(s, "%2e") }

// IsDoubleDotSegment reports ".." in any of its percent-encoded spellings.
func IsDoubleDotSegment(s string) bool {
	switch strings.ToLower(s) {
	case "..", ".%2e", "%2e.", "%2e%2e":
		return true
	}
	return false
}
