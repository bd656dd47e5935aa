package whatwg

// URL parsing, reduced to what a PathUri needs.
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

// URL is a parsed URL in its WHATWG form; only a file URL is parsed beyond its scheme.
type URL struct {
	Scheme   string   // lower-cased
	Host     string   // serialized host; "" = none (localhost is folded to "")
	Path     []string // percent-encoded segments
	Query    bool     // a query was present (even empty)
	Fragment bool     // a fragment was present (even empty)
}

// Parse parses input as rust-url would, with no base URL. Invalid UTF-8 is replaced by
// U+FFFD first (the reference's input is a Rust string).
func Parse(input string) (*URL, error) {
	input = Trim(strings.ToValidUTF8(input, "\uFFFD"))
	scheme, rest, ok := SplitScheme(input)
	if !ok {
		return nil, ErrRelativeWithoutBase
	}
	scheme = strings.ToLower(scheme)
	if scheme != "file" {
		if err := checkOtherScheme(scheme, rest); err != nil {
			return nil, err
		}
		return &URL{Scheme: scheme}, nil
	}
	u := &URL{Scheme: scheme}
	if err := u.parseFile(rest); err != nil {
		return nil, err
	}
	return u, nil
}

// checkOtherScheme reports the parse errors rust-url raises for a non-file URL. For special
// schemes the authority is checked (empty host, port, host syntax); non-special URLs almost
// always parse.
func checkOtherScheme(scheme, rest string) error {
	if !isSpecial(scheme) {
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
					return ErrInvalidIPv6
				}
				if _, err := ParseIPv6(auth[1:end]); err != nil {
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
		return ErrEmptyHost
	}
	if _, err := ParseHost(host); err != nil {
		return err
	}
	if _, ok := ParsePort(port); !ok {
		return ErrInvalidPort
	}
	return nil
}

// parseFile runs the WHATWG states from "file state" onwards on rest (the input after
// "file:").
func (u *URL) parseFile(rest string) error {
	i := 0
	if i < len(rest) && IsSlash(rest[i]) { // file slash state
		i++
		if i < len(rest) && IsSlash(rest[i]) { // file host state
			i++
			end := i
			for end < len(rest) && !IsSlash(rest[end]) && rest[end] != '?' && rest[end] != '#' {
				end++
			}
			buf := rest[i:end]
			switch {
			case IsWindowsDriveLetter(buf):
				// Drive-letter quirk: the buffer is not a host but the first path segment,
				// normalised to "X:" (observed: file://C|/x is a drive, file:///C|/x is not).
				u.Path = append(u.Path, buf[:1]+":")
				i = end
				if i < len(rest) && IsSlash(rest[i]) {
					i++
				} else {
					u.noteQueryFragment(rest[i:])
					return nil
				}
			case buf == "":
				i = end
				if i < len(rest) && IsSlash(rest[i]) { // path start state
					i++
				}
			default:
				host, err := ParseHost(buf)
				if err != nil {
					return err
				}
				if host == "localhost" {
					host = ""
				}
				u.Host = host
				i = end
				if i < len(rest) && IsSlash(rest[i]) {
					i++
				}
			}
		}
	}
	u.parsePath(rest[i:])
	return nil
}

// parsePath runs the path state over s, then notes a query and fragment.
func (u *URL) parsePath(s string) {
	var buf []byte
	i := 0
	for {
		var c byte
		eof := i >= len(s)
		if !eof {
			c = s[i]
		}
		if eof || IsSlash(c) || c == '?' || c == '#' {
			seg := string(buf)
			buf = buf[:0]
			sep := !eof && IsSlash(c)
			switch {
			case IsDoubleDotSegment(seg):
				u.shortenPath()
				if !sep {
					u.Path = append(u.Path, "")
				}
			case IsSingleDotSegment(seg):
				if !sep {
					u.Path = append(u.Path, "")
				}
			default:
				u.Path = append(u.Path, seg)
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
			if InPathSet(c) {
				buf = AppendPercent(buf, c)
			} else {
				buf = append(buf, c)
			}
			i++
			continue
		}
		_, n := utf8.DecodeRuneInString(s[i:])
		for k := 0; k < n; k++ {
			buf = AppendPercent(buf, s[i+k])
		}
		i += n
	}
}

// noteQueryFragment records a query and/or fragment at the start of s ("" = neither).
func (u *URL) noteQueryFragment(s string) {
	if strings.HasPrefix(s, "?") {
		u.Query = true
	}
	if strings.IndexByte(s, '#') >= 0 {
		u.Fragment = true
	}
}

// shortenPath pops the last segment, keeping a lone normalised drive letter.
func (u *URL) shortenPath() {
	if len(u.Path) == 1 && IsNormalizedDriveLetter(u.Path[0]) {
		return
	}
	if len(u.Path) > 0 {
		u.Path = u.Path[:len(u.Path)-1]
	}
}

// Serialize renders a file URL in its canonical form.
func (u *URL) Serialize() string {
	var b strings.Builder
	b.WriteString("file://")
	b.WriteString(u.Host)
	for _, seg := range u.Path {
		b.WriteByte('/')
		b.WriteString(seg)
	}
	return b.String()
}

func isSpecial(scheme string) bool {
	_, ok := SpecialSchemes[scheme]
	return ok
}
