package policy

// PathUri handling (spec/jsonrpc.md §4), reduced to what the sandbox needs: parse a
// file: URL with internal/whatwg's rules, the way the reference's parser does for the
// inputs clients send, then
// convert it to a native Linux path. Parsing rejects syntax the reference rejects while
// decoding; host applicability (UNC authority, drive letter, NUL byte) is checked only
// by Native, because the reference reports it later, during sandbox preparation.

import (
	"path"
	"strings"

	"github.com/execlab/executor/internal/whatwg"
)

// PathURI is a parsed file: URL. The zero value is "absent".
type PathURI struct {
	host    string // authority; "" for local (localhost is dropped)
	path    string // percent-decoded, dot segments folded, lexically clean, starts with "/"
	windows bool   // drive-letter first segment
	set     bool
}

// ParsePathURI parses s strictly; errors carry the reference's decoder texts.
func ParsePathURI(s string) (PathURI, error) {
	u, err := parsePathURI(s)
	if err != nil {
		return PathURI{}, err
	}
	return u, nil
}

func parsePathURI(s string) (PathURI, *Error) {
	scheme, rest, ok := whatwg.SplitScheme(whatwg.Trim(s))
	if !ok {
		return PathURI{}, invalidParams("invalid URI: relative URL without a base")
	}
	if !strings.EqualFold(scheme, "file") {
		return PathURI{}, invalidParams("unsupported path URI scheme `%s`", strings.ToLower(scheme))
	}
	rest = strings.ReplaceAll(rest, `\`, "/")
	if i := strings.IndexByte(rest, '#'); i >= 0 {
		if strings.IndexByte(rest[:i], '?') >= 0 {
			return PathURI{}, invalidParams("query parameters are not allowed in path URIs")
		}
		return PathURI{}, invalidParams("fragments are not allowed in path URIs")
	}
	if strings.IndexByte(rest, '?') >= 0 {
		return PathURI{}, invalidParams("query parameters are not allowed in path URIs")
	}
	u := PathURI{set: true}
	if strings.HasPrefix(rest, "//") {
		rest = rest[2:]
		end := strings.IndexByte(rest, '/')
		if end < 0 {
			end = len(rest)
		}
		host := rest[:end]
		rest = rest[end:]
		if strings.ContainsAny(host, "@:") {
			if whatwg.IsNormalizedDriveLetter(host) {
				rest = "/" + host + rest
				host = ""
			} else {
				return PathURI{}, invalidParams("invalid URI: invalid international domain name")
			}
		}
		host = strings.ToLower(whatwg.PercentDecode(host))
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
		switch {
		case whatwg.IsSingleDotSegment(seg):
			continue
		case whatwg.IsDoubleDotSegment(seg):
			if len(segs) > 0 {
				segs = segs[:len(segs)-1]
			}
			continue
		}
		segs = append(segs, whatwg.PercentDecode(seg))
	}
	if len(segs) > 0 && whatwg.IsNormalizedDriveLetter(segs[0]) {
		u.windows = true
	}
	u.path = path.Clean("/" + strings.Join(segs, "/"))
	return u, nil
}

// IsZero reports whether u is absent.
func (u PathURI) IsZero() bool { return !u.set }

// String renders u as the normalised URI (segment bytes percent-encoded as the
// reference emits them, spec/jsonrpc.md §4).
func (u PathURI) String() string {
	if !u.set {
		return ""
	}
	b := append([]byte("file://"), u.host...)
	for _, seg := range strings.Split(strings.TrimPrefix(u.path, "/"), "/") {
		b = append(b, '/')
		b = append(b, whatwg.PercentEncode(seg, whatwg.InSpecialSegmentSet)...)
	}
	return string(b)
}

// Native returns the absolute Linux path u names, or the reference's InvalidInput text
// "'<uri>' is invalid on 'linux'" for a UNC authority, a drive letter or a NUL byte.
func (u PathURI) Native() (string, error) {
	if !u.set {
		return "", invalidParams("invalid URI: relative URL without a base")
	}
	if u.host != "" || u.windows || strings.IndexByte(u.path, 0) >= 0 {
		return "", invalidParams("'%s' is invalid on '%s'", u.String(), hostOS)
	}
	return u.path, nil
}

// FromNative builds a PathURI for an absolute native path (used by the stage encoding
// and tests). A relative path is made absolute against "/".
func FromNative(p string) PathURI {
	return PathURI{set: true, path: path.Clean("/" + p)}
}

// UnmarshalJSON decodes a PathUri string.
func (u *PathURI) UnmarshalJSON(data []byte) error {
	s, err := decodeString(data)
	if err != nil {
		return err
	}
	v, perr := parsePathURI(s)
	if perr != nil {
		return perr
	}
	*u = v
	return nil
}

// MarshalJSON encodes u as its normalised URI string.
func (u PathURI) MarshalJSON() ([]byte, error) {
	return marshalString(u.String()), nil
}
