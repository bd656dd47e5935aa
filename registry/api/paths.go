package api

import (
	"errors"
	"strings"
)

// Path returns the request path of one endpoint for a validated environment id, for
// example Path("env-1", RegisterSuffix) = "/cloud/environment/env-1/register".
func Path(environmentID, suffix string) string {
	return EnvironmentPathPrefix + environmentID + "/" + suffix
}

// ErrEmptyBaseURL is returned by JoinURL for a base that is empty after trimming.
var ErrEmptyBaseURL = errors.New("registry: empty registry base URL")

// JoinURL joins the registry base URL and a path as the reference does
// (spec/registry-auth.md §2.1): trim whitespace, strip every trailing '/', keep any path
// prefix, then base + "/" + path without its leading '/'.
func JoinURL(base, path string) (string, error) {
	b := strings.TrimRight(strings.TrimSpace(base), "/")
	if b == "" {
		return "", ErrEmptyBaseURL
	}
	return b + "/" + strings.TrimLeft(path, "/"), nil
}

// SplitPath parses a request path of the form /cloud/environment/{id}/{suffix} after the
// base path prefix has been removed. It reports ok=false for any other shape (extra
// segments, an empty id). The id is returned as it appears; callers run
// ValidateEnvironmentID on it.
func SplitPath(path string) (environmentID, suffix string, ok bool) {
	rest, found := strings.CutPrefix(path, EnvironmentPathPrefix)
	if !found {
		return "", "", false
	}
	environmentID, suffix, found = strings.Cut(rest, "/")
	if !found || environmentID == "" || suffix == "" || strings.Contains(suffix, "/") {
		return "", "", false
	}
	return environmentID, suffix, true
}
