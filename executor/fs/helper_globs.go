package fs

// Deny-glob re-check in the helper (spec/sandbox.md §4, §6 "Glob masks are
// point-in-time"). The launcher expands deny globs once, when the helper's sandbox is
// built; a file created afterwards that matches a deny glob is not masked. Read
// operations in the helper therefore evaluate the original deny globs against the
// canonical target of the paths they read, and refuse a match exactly as a masked
// file refuses the read: -32600 "Permission denied (os error 13)".

import (
	"encoding/json"
	"path/filepath"
	"syscall"

	"github.com/execlab/executor/executor/protocol"
	"github.com/execlab/executor/sandbox/policy"
)

// readPaths returns the paths a read method reads (nil for other methods). A replace
// open is checked too: a denied path allows no access at all.
func readPaths(method string, raw json.RawMessage) []protocol.PathURI {
	var p struct {
		Path       *protocol.PathURI `json:"path"`
		SourcePath *protocol.PathURI `json:"sourcePath"`
	}
	switch method {
	case protocol.MethodFsReadFile, protocol.MethodFsOpen, helperMethodOpenReplace, protocol.MethodFsReadDirectory, protocol.MethodFsWalk:
		if json.Unmarshal(raw, &p) == nil && p.Path != nil {
			return []protocol.PathURI{*p.Path}
		}
	case protocol.MethodFsCopy:
		if json.Unmarshal(raw, &p) == nil && p.SourcePath != nil {
			return []protocol.PathURI{*p.SourcePath}
		}
	}
	return nil
}

// checkDenyGlobs refuses a read whose canonical target, or an ancestor of it, matches
// one of globs. Paths that do not resolve are left to the operation, which reports
// them with its usual error.
func checkDenyGlobs(globs []string, method string, raw json.RawMessage) error {
	if len(globs) == 0 {
		return nil
	}
	for _, u := range readPaths(method, raw) {
		native, err := u.Native()
		if err != nil {
			continue
		}
		canon, err := filepath.EvalSymlinks(native)
		if err != nil {
			continue
		}
		if deniedByGlob(globs, canon) {
			return rpcError(syscall.EACCES)
		}
	}
	return nil
}

func deniedByGlob(globs []string, p string) bool {
	for q := p; ; q = filepath.Dir(q) {
		for _, g := range globs {
			if policy.MatchGlob(g, q) {
				return true
			}
		}
		if q == "/" {
			return false
		}
	}
}
