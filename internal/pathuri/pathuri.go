// Package pathuri is the one PathUri type (spec/jsonrpc.md §4): the file: URL every path on
// the wire is, as the reference's PathUri parses, validates, renders and converts it. The
// protocol's fields (executor/protocol re-exports it as protocol.PathURI) and the sandbox
// policy's paths (sandbox/policy) are both this type, so a path is spelled and rejected the
// same way wherever it appears (issue 27).
//
// Layers: on internal/whatwg (the URL rules) and jsonwire (error codes); nothing else of the
// project. No I/O, no goroutines.
package pathuri

// PathUri (spec/jsonrpc.md §4): every filesystem path on the wire is a JSON string holding a
// file: URL.
//
//	POSIX           file:///abs/path            (authority "localhost" is folded away)
//	Windows drive   file:///C:/dir/file         (first non-empty segment "X:")
//	Windows UNC     file://server/share/dir     (any authority)
//	opaque fallback file:///%00/bad/path/<unpadded base64url of the native path bytes>
//
// Decoding parses with WHATWG rules (internal/whatwg), then rejects other schemes,
// credentials, ports, queries, fragments and encoded NULs outside the fallback. The value
// kept is the canonical serialization, which is what the reference echoes back.

import (
	"encoding/base64"
	"encoding/json"
	"path"
	"runtime"
	"strings"

	"github.com/execlab/executor/internal/whatwg"
	"github.com/execlab/executor/jsonwire"
)

// PathURI is a validated file: URI in canonical form. The zero value is not a valid URI.
// Values decoded from JSON or returned by Parse and FromNative are canonical; a
// PathURI built by conversion from an arbitrary string is re-validated by Native.
type PathURI string

// badPathPrefix starts the opaque fallback form (spec/jsonrpc.md §4).
const badPathPrefix = "file:///%00/bad/path/"

// HostOS is the operating-system name the reference reports in PathUri errors (Rust's
// std::env::consts::OS: "linux", "macos", "windows").
var HostOS = func() string {
	if runtime.GOOS == "darwin" {
		return "macos"
	}
	return runtime.GOOS
}()

// hostIsWindows selects the native path convention.
const hostIsWindows = runtime.GOOS == "windows"

// InvalidPathError reports a URI that names no path on this host: a foreign-OS URI, an
// encoded NUL outside the fallback, or a fallback that does not round-trip. It is an
// InvalidInput error: -32600 on fs/* paths, -32602 when decoding params or a cwd.
type InvalidPathError struct {
	URI string // canonical URI
}

func (e *InvalidPathError) Error() string { return "'" + e.URI + "' is invalid on '" + HostOS + "'" }

// PathURIError is a PathUri decode failure; its text is the reference's, verbatim.
type PathURIError struct{ Msg string }

func (e *PathURIError) Error() string { return e.Msg }

// Parse parses and validates s and returns its canonical form. Errors are
// *PathURIError or *InvalidPathError with the reference's exact text.
func Parse(s string) (PathURI, error) {
	u, err := whatwg.Parse(s)
	if err != nil {
		return "", &PathURIError{Msg: "invalid URI: " + err.Error()}
	}
	if u.Scheme != "file" {
		return "", &PathURIError{Msg: "unsupported path URI scheme `" + u.Scheme + "`"}
	}
	if u.Query {
		return "", &PathURIError{Msg: "query parameters are not allowed in path URIs"}
	}
	if u.Fragment {
		return "", &PathURIError{Msg: "fragments are not allowed in path URIs"}
	}
	canon := u.Serialize()
	if strings.Contains(whatwg.PercentDecode(strings.Join(u.Path, "/")), "\x00") {
		if _, ok := opaqueBytes(canon); !ok {
			return "", &InvalidPathError{URI: canon}
		}
	}
	return PathURI(canon), nil
}

// UnmarshalJSON decodes a JSON string and validates it as a PathUri. The error text is the
// reference's decoder text (used verbatim as the -32602 message).
func (p *PathURI) UnmarshalJSON(b []byte) error {
	if len(b) == 0 || b[0] != '"' {
		return &PathURIError{Msg: "invalid type: " + jsonwire.Unexpected(b) + ", expected a string"}
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return &PathURIError{Msg: err.Error()}
	}
	u, err := Parse(s)
	if err != nil {
		return err
	}
	*p = u
	return nil
}

// String returns the canonical URI.
func (p PathURI) String() string { return string(p) }

// IsZero reports whether p is absent (the empty string: never a valid PathUri).
func (p PathURI) IsZero() bool { return p == "" }

// IsOpaque reports whether p is the opaque fallback form, which has no parent, basename or
// children.
func (p PathURI) IsOpaque() bool {
	_, ok := opaqueBytes(string(p))
	return ok
}

// Native converts p to an absolute native path on this host, lexically cleaned (no ".",
// "..", repeated or trailing separators), as the reference's AbsolutePathBuf does. A
// foreign-OS URI or a fallback that does not round-trip yields *InvalidPathError; a value
// that is not a valid PathUri at all yields the Parse error.
func (p PathURI) Native() (string, error) {
	canon, err := Parse(string(p))
	if err != nil {
		return "", err
	}
	s := string(canon)
	if raw, ok := opaqueBytes(s); ok {
		if hostIsWindows || !strings.HasPrefix(string(raw), "/") || FromNative(string(raw)) != canon {
			return "", &InvalidPathError{URI: s}
		}
		return string(raw), nil
	}
	u, err := whatwg.Parse(s)
	if err != nil {
		return "", err
	}
	if i := driveSegment(u.Path); i >= 0 {
		return "", &InvalidPathError{URI: windowsDriveURI(u.Path[i:])}
	}
	if hostIsWindows || u.Host != "" {
		return "", &InvalidPathError{URI: s}
	}
	var b strings.Builder
	for _, seg := range u.Path {
		b.WriteByte('/')
		b.WriteString(whatwg.PercentDecode(seg))
	}
	return path.Clean(b.String()), nil
}

// NativeCwd converts a process cwd, failing with the -32602 error process/start sends for
// a URI that is not valid on this host (spec/jsonrpc.md §4, host applicability).
func (p PathURI) NativeCwd() (string, error) {
	native, err := p.Native()
	if err != nil {
		return "", jsonwire.InvalidParams("cwd URI `%s` is not valid on this exec-server host: %s", string(p), err.Error())
	}
	return native, nil
}

// driveSegment returns the index of the first non-empty segment when it is a Windows
// drive ("C:"), else -1.
func driveSegment(segs []string) int {
	for i, s := range segs {
		if s != "" {
			if whatwg.IsNormalizedDriveLetter(s) {
				return i
			}
			return -1
		}
	}
	return -1
}

// windowsDriveURI renders a drive URI as the reference reports it in errors: no authority,
// upper-case drive letter, leading empty segments dropped (observed from codex 0.169.0:
// file://server/c:/x and file:////c:/x are both reported as file:///C:/x).
func windowsDriveURI(segs []string) string {
	var b strings.Builder
	b.WriteString("file:///")
	b.WriteString(strings.ToUpper(segs[0]))
	for _, s := range segs[1:] {
		b.WriteByte('/')
		b.WriteString(s)
	}
	return b.String()
}

// opaqueBytes returns the native path bytes of a canonical fallback URI.
func opaqueBytes(s string) ([]byte, bool) {
	enc, ok := strings.CutPrefix(s, badPathPrefix)
	if !ok || enc == "" || strings.Contains(enc, "/") {
		return nil, false
	}
	raw, err := base64.RawURLEncoding.DecodeString(enc)
	if err != nil || base64.RawURLEncoding.EncodeToString(raw) != enc {
		return nil, false
	}
	return raw, true
}

// FromNative converts an absolute native path to its PathUri, byte for byte as the
// reference does: the path is lexically cleaned, each component is percent-encoded
// (segmentSet), and a path with no URI form (a NUL byte, or a relative path) becomes the
// opaque fallback, which only an identical absolute clean path converts back from.
func FromNative(p string) PathURI {
	if !strings.HasPrefix(p, "/") {
		return opaque(p)
	}
	p = path.Clean(p)
	if strings.IndexByte(p, 0) >= 0 {
		return opaque(p)
	}
	if p == "/" {
		return "file:///"
	}
	b := make([]byte, 0, len("file://")+len(p)+len(p)/4)
	b = append(b, "file://"...)
	for i := 0; i < len(p); i++ {
		c := p[i]
		if c != '/' && whatwg.InSpecialSegmentSet(c) {
			b = whatwg.AppendPercent(b, c)
			continue
		}
		b = append(b, c)
	}
	return PathURI(b)
}

// AppendNativeSegment percent-encodes one native file name as FromNative does and appends it
// to dst. Used to build child URIs without re-encoding the parent.
func AppendNativeSegment(dst []byte, name string) []byte {
	for i := 0; i < len(name); i++ {
		c := name[i]
		if whatwg.InSpecialSegmentSet(c) {
			dst = whatwg.AppendPercent(dst, c)
			continue
		}
		dst = append(dst, c)
	}
	return dst
}

func opaque(p string) PathURI {
	return PathURI(badPathPrefix + base64.RawURLEncoding.EncodeToString([]byte(p)))
}
