package protocol

// PathUri (spec/jsonrpc.md §4) is internal/pathuri's one type, shared with the sandbox
// policy; the names below keep the protocol's API.

import "github.com/execlab/executor/internal/pathuri"

// PathURI is a validated file: URI in canonical form (internal/pathuri).
type PathURI = pathuri.PathURI

// InvalidPathError reports a URI that names no path on this host (internal/pathuri).
type InvalidPathError = pathuri.InvalidPathError

// PathURIError is a PathUri decode failure with the reference's text (internal/pathuri).
type PathURIError = pathuri.PathURIError

// HostOS is the operating-system name the reference reports in PathUri errors.
var HostOS = pathuri.HostOS

// ParsePathURI parses and validates s and returns its canonical form (pathuri.Parse).
func ParsePathURI(s string) (PathURI, error) { return pathuri.Parse(s) }

// FromNative converts an absolute native path to its PathUri (pathuri.FromNative).
func FromNative(p string) PathURI { return pathuri.FromNative(p) }

// AppendNativeSegment percent-encodes one native file name as FromNative does and appends
// it to dst (pathuri.AppendNativeSegment).
func AppendNativeSegment(dst []byte, name string) []byte {
	return pathuri.AppendNativeSegment(dst, name)
}
