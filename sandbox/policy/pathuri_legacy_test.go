// Code generated for the differential fuzz of issue 27 from the pre-internal/whatwg
// implementation; deleted after the fuzz ran. DO NOT EDIT.

package policy

// PathUri handling (spec/jsonrpc.md §4), reduced to what the sandbox needs: parse a
// file: URL the way the reference's WHATWG parser does for the inputs clients send, then
// convert it to a native Linux path. Parsing rejects syntax the reference rejects while
// decoding; host applicability (UNC authority, drive letter, NUL byte) is checked only
// by Native, because the reference reports it later, during sandbox preparation.

import (
	"path"
	"strings"
)

// legacyPathURI is a parsed file: URL. The zero value is "absent".
type legacyPathURI struct {
	host    string // authority; "" for local (localhost is dropped)
	path    string // percent-decoded, dot segments folded, lexically clean, starts with "/"
	windows bool   // drive-letter first segment
	set     bool
}

// legacyParsePathURI parses s strictly; errors carry the reference's decoder texts.
func legacyParsePathURI(s string) (legacyPathURI, error) {
	u, err := legacyparsePathURI(s)
	if err != nil {
		return legacyPathURI{}, err
	}
	return u, nil
}

func legacyparsePathURI(s string) (legacyPathURI, *Error) {
	s = strings.Trim(s, "\x00\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f ")
	s = strings.NewReplacer("\t", "", "\n", "", "\r", "").Replace(s)
	scheme, rest, ok := legacysplitScheme(s)
	if !ok {
		return legacyPathURI{}, invalidParams("invalid URI: relative URL without a base")
	}
	if !strings.EqualFold(scheme, "file") {
		return legacyPathURI{}, invalidParams("unsupported path URI scheme `%s`", strings.ToLower(scheme))
	}
	rest = strings.ReplaceAll(rest, `\`, "/")
	if i := strings.IndexByte(rest, '#'); i >= 0 {
		if strings.IndexByte(rest[:i], '?') >= 0 {
			return legacyPathURI{}, invalidParams("query parameters are not allowed in path URIs")
		}
		return legacyPathURI{}, invalidParams("fragments are not allowed in path URIs")
	}
	if strings.IndexByte(rest, '?') >= 0 {
		return legacyPathURI{}, invalidParams("query parameters are not allowed in path URIs")
	}
	u := legacyPathURI{set: true}
	if strings.HasPrefix(rest, "//") {
		rest = rest[2:]
		end := strings.IndexByte(rest, '/')
		if end < 0 {
			end = len(rest)
		}
		host := rest[:end]
		rest = rest[end:]
		if strings.ContainsAny(host, "@:") {
			if legacyisDriveSegment(host) {
				rest = "/" + host + rest
				host = ""
			} else {
				return legacyPathURI{}, invalidParams("invalid URI: invalid international domain name")
			}
		}
		host = strings.ToLower(legacypercentDecode(host))
		if host == "localhost" {
			host = ""
		}
		u.host = host
	}
	if !strings.HasPrefix(rest, "/") {
		rest = "/" + rest
	}
	var segs []string
	for _, seg := range strings.Split(rest[1:], "/") {
		switch strings.ToLower(seg) {
		case ".", "%2e":
			continue
		case "..", ".%2e", "%2e.", "%2e%2e":
			if len(segs) > 0 {
				segs = segs[:len(segs)-1]
			}
			continue
		}
		segs = append(segs, legacypercentDecode(seg))
	}
	if len(segs) > 0 && legacyisDriveSegment(segs[0]) {
		u.windows = true
	}
	u.path = path.Clean("/" + strings.Join(segs, "/"))
	return u, nil
}

func legacysplitScheme(s string) (scheme, rest string, ok bool) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
		case i > 0 && (c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.'):
		case i > 0 && c == ':':
			return s[:i], s[i+1:], true
		default:
			return "", "", false
		}
	}
	return "", "", false
}

func legacyisDriveSegment(s string) bool {
	return len(s) == 2 && (s[0] >= 'a' && s[0] <= 'z' || s[0] >= 'A' && s[0] <= 'Z') && s[1] == ':'
}

func legacyunhex(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// legacypercentDecode decodes %XX escapes; malformed escapes stay literal (WHATWG).
func legacypercentDecode(s string) string {
	if strings.IndexByte(s, '%') < 0 {
		return s
	}
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) {
			hi, ok1 := legacyunhex(s[i+1])
			lo, ok2 := legacyunhex(s[i+2])
			if ok1 && ok2 {
				b = append(b, hi<<4|lo)
				i += 2
				continue
			}
		}
		b = append(b, s[i])
	}
	return string(b)
}

// IsZero reports whether u is absent.
func (u legacyPathURI) IsZero() bool { return !u.set }

// String renders u as the normalised URI (segment bytes percent-encoded as the
// reference emits them, spec/jsonrpc.md §4).
func (u legacyPathURI) String() string {
	if !u.set {
		return ""
	}
	var b strings.Builder
	b.WriteString("file://")
	b.WriteString(u.host)
	for _, seg := range strings.Split(strings.TrimPrefix(u.path, "/"), "/") {
		b.WriteByte('/')
		for i := 0; i < len(seg); i++ {
			c := seg[i]
			if c < 0x20 || c >= 0x7f || strings.IndexByte(" \"#%<>?\\`{}", c) >= 0 {
				const hexdig = "0123456789ABCDEF"
				b.WriteByte('%')
				b.WriteByte(hexdig[c>>4])
				b.WriteByte(hexdig[c&15])
				continue
			}
			b.WriteByte(c)
		}
	}
	return b.String()
}

// Native returns the absolute Linux path u names, or the reference's InvalidInput text
// "'<uri>' is invalid on 'linux'" for a UNC authority, a drive letter or a NUL byte.
func (u legacyPathURI) Native() (string, error) {
	if !u.set {
		return "", invalidParams("invalid URI: relative URL without a base")
	}
	if u.host != "" || u.windows || strings.IndexByte(u.path, 0) >= 0 {
		return "", invalidParams("'%s' is invalid on '%s'", u.String(), hostOS)
	}
	return u.path, nil
}

// legacyFromNative builds a legacyPathURI for an absolute native path (used by the stage encoding
// and tests). A relative path is made absolute against "/".
func legacyFromNative(p string) legacyPathURI {
	return legacyPathURI{set: true, path: path.Clean("/" + p)}
}

// UnmarshalJSON decodes a PathUri string.
func (u *legacyPathURI) UnmarshalJSON(data []byte) error {
	s, err := decodeString(data)
	if err != nil {
		return err
	}
	v, perr := legacyparsePathURI(s)
	if perr != nil {
		return perr
	}
	*u = v
	return nil
}

// MarshalJSON encodes u as its normalised URI string.
func (u legacyPathURI) MarshalJSON() ([]byte, error) {
	return marshalString(u.String()), nil
}
