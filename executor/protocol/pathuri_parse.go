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

// parsedURL is a parsed file URL in its WHATWG form.
type parsedURL struct {
	scheme   string
	host     string   // serialized host; "" = none (localhost is folded to "")
	path     []string // percent-encoded segments
	query    bool     // a query was present (even empty)
	fragment bool     // a fragment was present (even empty)
}

// url.ParseError texts (rust-url), used after "invalid URI: ".
const (
	errRelativeWithoutBase = "relative URL without a base"
	errEmptyHost           = "empty host"
	errIdna                = "invalid international domain name"
	errInvalidPort         = "invalid port number"
	errInvalidIPv4         = "invalid IPv4 address"
	errInvalidIPv6         = "invalid IPv6 address"
)

// urlError is a url::ParseError; its text is the bare rust-url message.
type urlError string

func (e urlError) Error() string { return string(e) }

// specialSchemes are the WHATWG special schemes other than file.
var specialSchemes = map[string]bool{"http": true, "https": true, "ws": true, "wss": true, "ftp": true}

// parseURL parses input as rust-url would, with no base URL.
func parseURL(input string) (*parsedURL, error) {
	input = strings.ToValidUTF8(input, "\uFFFD")
	input = strings.TrimFunc(input, func(r rune) bool { return r <= 0x20 })
	if strings.ContainsAny(input, "\t\n\r") {
		input = strings.NewReplacer("\t", "", "\n", "", "\r", "").Replace(input)
	}
	scheme, rest, ok := splitScheme(input)
	if !ok {
		return nil, urlError(errRelativeWithoutBase)
	}
	if scheme != "file" {
		if err := checkOtherScheme(scheme, rest); err != nil {
			return nil, err
		}
		return &parsedURL{scheme: scheme}, nil
	}
	u := &parsedURL{scheme: scheme}
	if err := u.parseFile(rest); err != nil {
		return nil, err
	}
	return u, nil
}

// splitScheme returns the lower-cased scheme and the remainder after ':'.
func splitScheme(s string) (scheme, rest string, ok bool) {
	if s == "" || !isASCIIAlpha(s[0]) {
		return "", "", false
	}
	for i := 1; i < len(s); i++ {
		c := s[i]
		switch {
		case isASCIIAlpha(c) || isASCIIDigit(c) || c == '+' || c == '-' || c == '.':
		case c == ':':
			return strings.ToLower(s[:i]), s[i+1:], true
		default:
			return "", "", false
		}
	}
	return "", "", false
}

// checkOtherScheme reports the parse errors rust-url raises for a non-file URL. For special
// schemes the authority is checked (empty host, port, host syntax); non-special URLs almost
// always parse.
func checkOtherScheme(scheme, rest string) error {
	if !specialSchemes[scheme] {
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
					return urlError(errInvalidIPv6)
				}
				if _, err := parseIPv6(auth[1:end]); err != nil {
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
		return urlError(errEmptyHost)
	}
	if _, err := parseHost(host); err != nil {
		return err
	}
	if port != "" {
		n := 0
		for i := 0; i < len(port); i++ {
			if !isASCIIDigit(port[i]) {
				return urlError(errInvalidPort)
			}
			n = n*10 + int(port[i]-'0')
			if n > 0xFFFF {
				return urlError(errInvalidPort)
			}
		}
	}
	return nil
}

// parseFile runs the WHATWG states from "file state" onwards on rest (the input after
// "file:").
func (u *parsedURL) parseFile(rest string) error {
	i := 0
	if i < len(rest) && isSlash(rest[i]) { // file slash state
		i++
		if i < len(rest) && isSlash(rest[i]) { // file host state
			i++
			end := i
			for end < len(rest) && !isSlash(rest[end]) && rest[end] != '?' && rest[end] != '#' {
				end++
			}
			buf := rest[i:end]
			switch {
			case isWindowsDriveLetter(buf):
				// Drive-letter quirk: the buffer is not a host but the first path segment,
				// normalised to "X:" (observed: file://C|/x is a drive, file:///C|/x is not).
				u.path = append(u.path, buf[:1]+":")
				i = end
				if i < len(rest) && isSlash(rest[i]) {
					i++
				} else {
					u.noteQueryFragment(rest[i:])
					return nil
				}
			case buf == "":
				i = end
				if i < len(rest) && isSlash(rest[i]) { // path start state
					i++
				}
			default:
				host, err := parseHost(buf)
				if err != nil {
					return err
				}
				if host == "localhost" {
					host = ""
				}
				u.host = host
				i = end
				if i < len(rest) && isSlash(rest[i]) {
					i++
				}
			}
		}
	}
	u.parsePath(rest[i:])
	return nil
}

// parsePath runs the path state over s, then notes a query and fragment.
func (u *parsedURL) parsePath(s string) {
	var buf strings.Builder
	i := 0
	for {
		var c byte
		eof := i >= len(s)
		if !eof {
			c = s[i]
		}
		if eof || isSlash(c) || c == '?' || c == '#' {
			seg := buf.String()
			buf.Reset()
			sep := !eof && isSlash(c)
			switch {
			case isDoubleDotSegment(seg):
				u.shortenPath()
				if !sep {
					u.path = append(u.path, "")
				}
			case isSingleDotSegment(seg):
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
			if inPathSet(c) {
				appendPercent(&buf, c)
			} else {
				buf.WriteByte(c)
			}
			i++
			continue
		}
		_, n := utf8.DecodeRuneInString(s[i:])
		for k := 0; k < n; k++ {
			appendPercent(&buf, s[i+k])
		}
		i += n
	}
}

// noteQueryFragment records a query and/or fragment at the start of s ("" = neither).
func (u *parsedURL) noteQueryFragment(s string) {
	if strings.HasPrefix(s, "?") {
		u.query = true
	}
	if strings.IndexByte(s, '#') >= 0 {
		u.fragment = true
	}
}

// shortenPath pops the last segment, keeping a lone normalised drive letter.
func (u *parsedURL) shortenPath() {
	if len(u.path) == 1 && isNormalizedDriveLetter(u.path[0]) {
		return
	}
	if len(u.path) > 0 {
		u.path = u.path[:len(u.path)-1]
	}
}

// serialize renders the URL in its canonical form. The first drive-letter segment is
// upper-cased as the reference reports it (spec/jsonrpc.md §4).
func (u *parsedURL) serialize() string {
	var b strings.Builder
	b.WriteString("file://")
	b.WriteString(u.host)
	for _, seg := range u.path {
		b.WriteByte('/')
		b.WriteString(seg)
	}
	return b.String()
}

// inPathSet reports whether an ASCII byte is in the WHATWG path percent-encode set.
func inPathSet(c byte) bool {
	if c < 0x20 || c == 0x7F {
		return true
	}
	switch c {
	case ' ', '"', '#', '<', '>', '?', '`', '{', '}':
		return true
	}
	return false
}

const upperHex = "0123456789ABCDEF"

func appendPercent(b *strings.Builder, c byte) {
	b.WriteByte('%')
	b.WriteByte(upperHex[c>>4])
	b.WriteByte(upperHex[c&0xF])
}

func isSlash(c byte) bool      { return c == '/' || c == '\\' }
func isASCIIAlpha(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }
func isASCIIDigit(c byte) bool { return c >= '0' && c <= '9' }

func isWindowsDriveLetter(s string) bool {
	return len(s) == 2 && isASCIIAlpha(s[0]) && (s[1] == ':' || s[1] == '|')
}

func isNormalizedDriveLetter(s string) bool {
	return len(s) == 2 && isASCIIAlpha(s[0]) && s[1] == ':'
}

func isSingleDotSegment(s string) bool { return s == "." || strings.EqualFold(s, "%2e") }

func isDoubleDotSegment(s string) bool {
	switch strings.ToLower(s) {
	case "..", ".%2e", "%2e.", "%2e%2e":
		return true
	}
	return false
}
