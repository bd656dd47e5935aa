// Code generated for the differential fuzz of issue 27 from the pre-internal/whatwg
// implementation; deleted after the fuzz ran. DO NOT EDIT.

package protocol

// PathUri (spec/jsonrpc.md §4): every filesystem path on the wire is a JSON string holding a
// file: URL.
//
//	POSIX           file:///abs/path            (authority "localhost" is folded away)
//	Windows drive   file:///C:/dir/file         (first non-empty segment "X:")
//	Windows UNC     file://server/share/dir     (any authority)
//	legacyOpaque fallback file:///%00/bad/path/<unpadded base64url of the native path bytes>
//
// Decoding parses with WHATWG rules (pathuri_parse.go), then rejects other schemes,
// credentials, ports, queries, fragments and encoded NULs outside the fallback. The value
// kept is the canonical serialization, which is what the reference echoes back.

import (
	"encoding/base64"
	"encoding/json"
	"path"
	"runtime"
	"strings"

	"github.com/execlab/executor/jsonwire"
)

// legacyPathURI is a validated file: URI in canonical form. The zero value is not a valid URI.
// Values decoded from JSON or returned by legacyParsePathURI and legacyFromNative are canonical; a
// legacyPathURI built by conversion from an arbitrary string is re-validated by Native.
type legacyPathURI string

// legacyBadPathPrefix starts the legacyOpaque fallback form (spec/jsonrpc.md §4).
const legacyBadPathPrefix = "file:///%00/bad/path/"

// legacyHostOS is the operating-system name the reference reports in PathUri errors (Rust's
// std::env::consts::OS: "linux", "macos", "windows").
var legacyHostOS = func() string {
	if runtime.GOOS == "darwin" {
		return "macos"
	}
	return runtime.GOOS
}()

// legacyHostIsWindows selects the native path convention.
const legacyHostIsWindows = runtime.GOOS == "windows"

// legacyInvalidPathError reports a URI that names no path on this host: a foreign-OS URI, an
// encoded NUL outside the fallback, or a fallback that does not round-trip. It is an
// InvalidInput error: -32600 on fs/* paths, -32602 when decoding params or a cwd.
type legacyInvalidPathError struct {
	URI string // canonical URI
}

func (e *legacyInvalidPathError) Error() string {
	return "'" + e.URI + "' is invalid on '" + legacyHostOS + "'"
}

// legacyPathURIError is a PathUri decode failure; its text is the reference's, verbatim.
type legacyPathURIError struct{ Msg string }

func (e *legacyPathURIError) Error() string { return e.Msg }

// legacyParsePathURI parses and validates s and returns its canonical form. Errors are
// *legacyPathURIError or *legacyInvalidPathError with the reference's exact text.
func legacyParsePathURI(s string) (legacyPathURI, error) {
	u, err := legacyParseURL(s)
	if err != nil {
		return "", &legacyPathURIError{Msg: "invalid URI: " + err.Error()}
	}
	if u.scheme != "file" {
		return "", &legacyPathURIError{Msg: "unsupported path URI scheme `" + u.scheme + "`"}
	}
	if u.query {
		return "", &legacyPathURIError{Msg: "query parameters are not allowed in path URIs"}
	}
	if u.fragment {
		return "", &legacyPathURIError{Msg: "fragments are not allowed in path URIs"}
	}
	canon := u.serialize()
	if strings.Contains(legacyPercentDecode(strings.Join(u.path, "/")), "\x00") {
		if _, ok := legacyOpaqueBytes(canon); !ok {
			return "", &legacyInvalidPathError{URI: canon}
		}
	}
	return legacyPathURI(canon), nil
}

// UnmarshalJSON decodes a JSON string and validates it as a PathUri. The error text is the
// reference's decoder text (used verbatim as the -32602 message).
func (p *legacyPathURI) UnmarshalJSON(b []byte) error {
	if len(b) == 0 || b[0] != '"' {
		return &legacyPathURIError{Msg: "invalid type: " + jsonwire.Unexpected(b) + ", expected a string"}
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return &legacyPathURIError{Msg: err.Error()}
	}
	u, err := legacyParsePathURI(s)
	if err != nil {
		return err
	}
	*p = u
	return nil
}

// String returns the canonical URI.
func (p legacyPathURI) String() string { return string(p) }

// IsOpaque reports whether p is the legacyOpaque fallback form, which has no parent, basename or
// children.
func (p legacyPathURI) IsOpaque() bool {
	_, ok := legacyOpaqueBytes(string(p))
	return ok
}

// Native converts p to an absolute native path on this host, lexically cleaned (no ".",
// "..", repeated or trailing separators), as the reference's AbsolutePathBuf does. A
// foreign-OS URI or a fallback that does not round-trip yields *legacyInvalidPathError; a value
// that is not a valid PathUri at all yields the legacyParsePathURI error.
func (p legacyPathURI) Native() (string, error) {
	canon, err := legacyParsePathURI(string(p))
	if err != nil {
		return "", err
	}
	s := string(canon)
	if raw, ok := legacyOpaqueBytes(s); ok {
		if legacyHostIsWindows || !strings.HasPrefix(string(raw), "/") || legacyFromNative(string(raw)) != canon {
			return "", &legacyInvalidPathError{URI: s}
		}
		return string(raw), nil
	}
	u, err := legacyParseURL(s)
	if err != nil {
		return "", err
	}
	if i := legacyDriveSegment(u.path); i >= 0 {
		return "", &legacyInvalidPathError{URI: legacyWindowsDriveURI(u.path[i:])}
	}
	if legacyHostIsWindows || u.host != "" {
		return "", &legacyInvalidPathError{URI: s}
	}
	var b strings.Builder
	for _, seg := range u.path {
		b.WriteByte('/')
		b.WriteString(legacyPercentDecode(seg))
	}
	return path.Clean(b.String()), nil
}

// NativeCwd converts a process cwd, failing with the -32602 error process/start sends for
// a URI that is not valid on this host (spec/jsonrpc.md §4, host applicability).
func (p legacyPathURI) NativeCwd() (string, error) {
	native, err := p.Native()
	if err != nil {
		return "", jsonwire.InvalidParams("cwd URI `%s` is not valid on this exec-server host: %s", string(p), err.Error())
	}
	return native, nil
}

// legacyDriveSegment returns the index of the first non-empty segment when it is a Windows
// drive ("C:"), else -1.
func legacyDriveSegment(segs []string) int {
	for i, s := range segs {
		if s != "" {
			if legacyIsNormalizedDriveLetter(s) {
				return i
			}
			return -1
		}
	}
	return -1
}

// legacyWindowsDriveURI renders a drive URI as the reference reports it in errors: no authority,
// upper-case drive letter, leading empty segments dropped (observed from codex 0.169.0:
// file://server/c:/x and file:////c:/x are both reported as file:///C:/x).
func legacyWindowsDriveURI(segs []string) string {
	var b strings.Builder
	b.WriteString("file:///")
	b.WriteString(strings.ToUpper(segs[0]))
	for _, s := range segs[1:] {
		b.WriteByte('/')
		b.WriteString(s)
	}
	return b.String()
}

// legacyOpaqueBytes returns the native path bytes of a canonical fallback URI.
func legacyOpaqueBytes(s string) ([]byte, bool) {
	enc, ok := strings.CutPrefix(s, legacyBadPathPrefix)
	if !ok || enc == "" || strings.Contains(enc, "/") {
		return nil, false
	}
	raw, err := base64.RawURLEncoding.DecodeString(enc)
	if err != nil || base64.RawURLEncoding.EncodeToString(raw) != enc {
		return nil, false
	}
	return raw, true
}

// legacyFromNative converts an absolute native path to its PathUri, byte for byte as the
// reference does: the path is lexically cleaned, each component is percent-encoded
// (segmentSet), and a path with no URI form (a NUL byte, or a relative path) becomes the
// legacyOpaque fallback, which only an identical absolute clean path converts back from.
func legacyFromNative(p string) legacyPathURI {
	if !strings.HasPrefix(p, "/") {
		return legacyOpaque(p)
	}
	p = path.Clean(p)
	if strings.IndexByte(p, 0) >= 0 {
		return legacyOpaque(p)
	}
	if p == "/" {
		return "file:///"
	}
	b := make([]byte, 0, len("file://")+len(p)+len(p)/4)
	b = append(b, "file://"...)
	for i := 0; i < len(p); i++ {
		c := p[i]
		if c != '/' && legacyInSegmentSet(c) {
			b = append(b, '%', legacyUpperHex[c>>4], legacyUpperHex[c&0xF])
			continue
		}
		b = append(b, c)
	}
	return legacyPathURI(b)
}

// legacyAppendNativeSegment percent-encodes one native file name as legacyFromNative does and appends it
// to dst. Used to build child URIs without re-encoding the parent.
func legacyAppendNativeSegment(dst []byte, name string) []byte {
	for i := 0; i < len(name); i++ {
		c := name[i]
		if legacyInSegmentSet(c) {
			dst = append(dst, '%', legacyUpperHex[c>>4], legacyUpperHex[c&0xF])
			continue
		}
		dst = append(dst, c)
	}
	return dst
}

func legacyOpaque(p string) legacyPathURI {
	return legacyPathURI(legacyBadPathPrefix + base64.RawURLEncoding.EncodeToString([]byte(p)))
}

// legacyInSegmentSet reports whether a native path byte is percent-encoded in a URI segment
// (rust-url's special path-segment set): controls, DEL, bytes ≥ 0x80, space and
// " # % / < > ? \ ` { }.
func legacyInSegmentSet(c byte) bool {
	if c < 0x20 || c >= 0x7F {
		return true
	}
	switch c {
	case ' ', '"', '#', '%', '/', '<', '>', '?', '\\', '`', '{', '}':
		return true
	}
	return false
}
