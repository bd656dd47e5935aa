// Code generated for the differential fuzz of issue 27 from the pre-internal/whatwg
// implementation; deleted after the fuzz ran. DO NOT EDIT.

package protocol

// WHATWG URL parsing, reduced to what a PathUri needs.
//
// Protocol flow: the reference parses every PathUri with rust-url (a WHATWG URL parser) and
// only then applies its own checks (scheme, credentials, port, query, fragment, NUL). The
// parser normalises odd spellings first, so the checks see the normalised URL:
//
//	input ──trim C0/space, drop TAB/LF/CR──▶ scheme ──"file"──▶ file state ──▶ host? ──▶ path ──▶ query? ──▶ fragment?
//	                                           └─other──▶ (validated loosely) unsupported scheme
//
// Only the file scheme is parsed in full. Other schemes are parsed far enough to produce the
// errors rust-url raises for the common special schemes (empty host, bad port, bad host) and
// otherwise end in "unsupported path URI scheme".

import (
	"strings"
	"unicode/utf8"
)

// legacyParsedURL is a parsed file URL in its WHATWG form.
type legacyParsedURL struct {
	scheme   string
	host     string   // serialized host; "" = none (localhost is folded to "")
	path     []string // percent-encoded segments
	query    bool     // a query was present (even empty)
	fragment bool     // a fragment was present (even empty)
}

// url.ParseError texts (rust-url), used after "invalid URI: ".
const (
	legacyErrRelativeWithoutBase = "relative URL without a base"
	legacyErrEmptyHost           = "empty host"
	legacyErrIdna                = "invalid international domain name"
	legacyErrInvalidPort         = "invalid port number"
	legacyErrInvalidIPv4         = "invalid IPv4 address"
	legacyErrInvalidIPv6         = "invalid IPv6 address"
)

// legacyUrlError is a url::ParseError; its text is the bare rust-url message.
type legacyUrlError string

func (e legacyUrlError) Error() string { return string(e) }

// legacySpecialSchemes are the WHATWG special schemes other than file.
var legacySpecialSchemes = map[string]bool{"http": true, "https": true, "ws": true, "wss": true, "ftp": true}

// legacyParseURL parses input as rust-url would, with no base URL.
func legacyParseURL(input string) (*legacyParsedURL, error) {
	input = strings.ToValidUTF8(input, "\uFFFD")
	input = strings.TrimFunc(input, func(r rune) bool { return r <= 0x20 })
	if strings.ContainsAny(input, "\t\n\r") {
		input = strings.NewReplacer("\t", "", "\n", "", "\r", "").Replace(input)
	}
	scheme, rest, ok := legacySplitScheme(input)
	if !ok {
		return nil, legacyUrlError(legacyErrRelativeWithoutBase)
	}
	if scheme != "file" {
		if err := legacyCheckOtherScheme(scheme, rest); err != nil {
			return nil, err
		}
		return &legacyParsedURL{scheme: scheme}, nil
	}
	u := &legacyParsedURL{scheme: scheme}
	if err := u.parseFile(rest); err != nil {
		return nil, err
	}
	return u, nil
}

// legacySplitScheme returns the lower-cased scheme and the remainder after ':'.
func legacySplitScheme(s string) (scheme, rest string, ok bool) {
	if s == "" || !legacyIsASCIIAlpha(s[0]) {
		return "", "", false
	}
	for i := 1; i < len(s); i++ {
		c := s[i]
		switch {
		case legacyIsASCIIAlpha(c) || legacyIsASCIIDigit(c) || c == '+' || c == '-' || c == '.':
		case c == ':':
			return strings.ToLower(s[:i]), s[i+1:], true
		default:
			return "", "", false
		}
	}
	return "", "", false
}

// legacyCheckOtherScheme reports the parse errors rust-url raises for a non-file URL. For special
// schemes the authority is checked (empty host, port, host syntax); non-special URLs almost
// always parse.
func legacyCheckOtherScheme(scheme, rest string) error {
	if !legacySpecialSchemes[scheme] {
		if strings.HasPrefix(rest, "//") {
			auth := rest[2:]
			if i := strings.IndexAny(auth, "/?#"); i >= 0 {
				auth = auth[:i]
			}
			if i := strings.LastIndexByte(auth, '@'); i >= 0 {
				auth = auth[i+1:]
			}
			if strings.HasPrefix(auth, "[") {
				end := strings.IndexByte(auth, ']')
				if end < 0 {
					return legacyUrlError(legacyErrInvalidIPv6)
				}
				if _, err := legacyParseIPv6(auth[1:end]); err != nil {
					return err
				}
			}
		}
		return nil
	}
	auth := strings.TrimLeft(rest, `/\`)
	if i := strings.IndexAny(auth, `/\?#`); i >= 0 {
		auth = auth[:i]
	}
	if i := strings.LastIndexByte(auth, '@'); i >= 0 {
		auth = auth[i+1:]
	}
	host, port := auth, ""
	if strings.HasPrefix(auth, "[") {
		if i := strings.IndexByte(auth, ']'); i >= 0 {
			host, port = auth[:i+1], strings.TrimPrefix(auth[i+1:], ":")
		}
	} else if i := strings.IndexByte(auth, ':'); i >= 0 {
		host, port = auth[:i], auth[i+1:]
	}
	if host == "" {
		return legacyUrlError(legacyErrEmptyHost)
	}
	if _, err := legacyParseHost(host); err != nil {
		return err
	}
	if port != "" {
		n := 0
		for i := 0; i < len(port); i++ {
			if !legacyIsASCIIDigit(port[i]) {
				return legacyUrlError(legacyErrInvalidPort)
			}
			n = n*10 + int(port[i]-'0')
			if n > 0xFFFF {
				return legacyUrlError(legacyErrInvalidPort)
			}
		}
	}
	return nil
}

// parseFile runs the WHATWG states from "file state" onwards on rest (the input after
// "file:").
func (u *legacyParsedURL) parseFile(rest string) error {
	i := 0
	if i < len(rest) && legacyIsSlash(rest[i]) { // file slash state
		i++
		if i < len(rest) && legacyIsSlash(rest[i]) { // file host state
			i++
			end := i
			for end < len(rest) && !legacyIsSlash(rest[end]) && rest[end] != '?' && rest[end] != '#' {
				end++
			}
			buf := rest[i:end]
			switch {
			case legacyIsWindowsDriveLetter(buf):
				// Drive-letter quirk: the buffer is not a host but the first path segment,
				// normalised to "X:" (observed: file://C|/x is a drive, file:///C|/x is not).
				u.path = append(u.path, buf[:1]+":")
				i = end
				if i < len(rest) && legacyIsSlash(rest[i]) {
					i++
				} else {
					u.noteQueryFragment(rest[i:])
					return nil
				}
			case buf == "":
				i = end
				if i < len(rest) && legacyIsSlash(rest[i]) { // path start state
					i++
				}
			default:
				host, err := legacyParseHost(buf)
				if err != nil {
					return err
				}
				if host == "localhost" {
					host = ""
				}
				u.host = host
				i = end
				if i < len(rest) && legacyIsSlash(rest[i]) {
					i++
				}
			}
		}
	}
	u.parsePath(rest[i:])
	return nil
}

// parsePath runs the path state over s, then notes a query and fragment.
func (u *legacyParsedURL) parsePath(s string) {
	var buf strings.Builder
	i := 0
	for {
		var c byte
		eof := i >= len(s)
		if !eof {
			c = s[i]
		}
		if eof || legacyIsSlash(c) || c == '?' || c == '#' {
			seg := buf.String()
			buf.Reset()
			sep := !eof && legacyIsSlash(c)
			switch {
			case legacyIsDoubleDotSegment(seg):
				u.shortenPath()
				if !sep {
					u.path = append(u.path, "")
				}
			case legacyIsSingleDotSegment(seg):
				if !sep {
					u.path = append(u.path, "")
				}
			default:
				u.path = append(u.path, seg)
			}
			if eof {
				return
			}
			if c == '?' || c == '#' {
				u.noteQueryFragment(s[i:])
				return
			}
			i++
			continue
		}
		if c < 0x80 {
			if legacyInPathSet(c) {
				legacyAppendPercent(&buf, c)
			} else {
				buf.WriteByte(c)
			}
			i++
			continue
		}
		_, n := utf8.DecodeRuneInString(s[i:])
		for k := 0; k < n; k++ {
			legacyAppendPercent(&buf, s[i+k])
		}
		i += n
	}
}

// noteQueryFragment records a query and/or fragment at the start of s ("" = neither).
func (u *legacyParsedURL) noteQueryFragment(s string) {
	if strings.HasPrefix(s, "?") {
		u.query = true
	}
	if strings.IndexByte(s, '#') >= 0 {
		u.fragment = true
	}
}

// shortenPath pops the last segment, keeping a lone normalised drive letter.
func (u *legacyParsedURL) shortenPath() {
	if len(u.path) == 1 && legacyIsNormalizedDriveLetter(u.path[0]) {
		return
	}
	if len(u.path) > 0 {
		u.path = u.path[:len(u.path)-1]
	}
}

// serialize renders the URL in its canonical form. The first drive-letter segment is
// upper-cased as the reference reports it (spec/jsonrpc.md §4).
func (u *legacyParsedURL) serialize() string {
	var b strings.Builder
	b.WriteString("file://")
	b.WriteString(u.host)
	for _, seg := range u.path {
		b.WriteByte('/')
		b.WriteString(seg)
	}
	return b.String()
}

// legacyInPathSet reports whether an ASCII byte is in the WHATWG path percent-encode set.
func legacyInPathSet(c byte) bool {
	if c < 0x20 || c == 0x7F {
		return true
	}
	switch c {
	case ' ', '"', '#', '<', '>', '?', '`', '{', '}':
		return true
	}
	return false
}

const legacyUpperHex = "0123456789ABCDEF"

func legacyAppendPercent(b *strings.Builder, c byte) {
	b.WriteByte('%')
	b.WriteByte(legacyUpperHex[c>>4])
	b.WriteByte(legacyUpperHex[c&0xF])
}

func legacyIsSlash(c byte) bool      { return c == '/' || c == '\\' }
func legacyIsASCIIAlpha(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }
func legacyIsASCIIDigit(c byte) bool { return c >= '0' && c <= '9' }

func legacyIsWindowsDriveLetter(s string) bool {
	return len(s) == 2 && legacyIsASCIIAlpha(s[0]) && (s[1] == ':' || s[1] == '|')
}

func legacyIsNormalizedDriveLetter(s string) bool {
	return len(s) == 2 && legacyIsASCIIAlpha(s[0]) && s[1] == ':'
}

func legacyIsSingleDotSegment(s string) bool { return s == "." || strings.EqualFold(s, "%2e") }

func legacyIsDoubleDotSegment(s string) bool {
	switch strings.ToLower(s) {
	case "..", ".%2e", "%2e.", "%2e%2e":
		return true
	}
	return false
}
