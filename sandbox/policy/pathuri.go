package policy

// PathUri handling (spec/jsonrpc.md §4): the policy's paths are internal/pathuri's one
// PathURI type, the same as the protocol's, so a sandbox path is spelled and rejected as
// the reference does everywhere (its cwd, workspace roots and permission paths are the same
// Rust PathUri). Decoding rejects what the reference rejects while decoding (syntax, an
// encoded NUL outside the fallback); host applicability (UNC authority, drive letter) is
// reported by Native, because the reference reports it later, during sandbox preparation.

import "github.com/execlab/executor/internal/pathuri"

// PathURI is a canonical PathUri; the zero value ("") is "absent".
type PathURI = pathuri.PathURI

// ParsePathURI parses s strictly; errors carry the reference's decoder texts.
func ParsePathURI(s string) (PathURI, error) {
	u, err := parsePathURI(s)
	if err != nil {
		return "", err
	}
	return u, nil
}

// parsePathURI is ParsePathURI with the policy's -32602 error.
func parsePathURI(s string) (PathURI, *Error) {
	u, err := pathuri.Parse(s)
	if err != nil {
		return "", invalidParams("%s", err.Error())
	}
	return u, nil
}

// FromNative builds the PathURI of an absolute native path (pathuri.FromNative).
func FromNative(p string) PathURI { return pathuri.FromNative(p) }
