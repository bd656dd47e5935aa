package policy

// Access precedence and derived predicates (spec/sandbox.md §2.2, §2.4, §2.5).

import (
	"path"
	"strings"
)

// IsWithin reports whether p equals dir or lies below it, comparing whole components
// of two clean absolute paths.
func IsWithin(p, dir string) bool {
	if dir == "/" {
		return strings.HasPrefix(p, "/")
	}
	return p == dir || strings.HasPrefix(p, dir) && len(p) > len(dir) && p[len(dir)] == '/'
}

// depth is the number of components of a clean absolute path ("/" = 0).
func depth(p string) int {
	if p == "/" {
		return 0
	}
	return strings.Count(p, "/")
}

// entryAccess applies the entry precedence only: deepest match, strongest on ties,
// no match = deny (0 when the policy is unrestricted is never returned; callers check).
func (p *Policy) entryAccess(abs string) Access {
	best, bestDepth := Access(0), -1
	for _, e := range p.Entries {
		if !IsWithin(abs, e.Path) {
			continue
		}
		d := depth(e.Path)
		if d > bestDepth || d == bestDepth && e.Access > best {
			best, bestDepth = e.Access, d
		}
	}
	if best == 0 {
		return AccessDeny
	}
	return best
}

// Abs resolves candidate against the policy cwd and cleans it lexically.
func (p *Policy) Abs(candidate string) string {
	if !strings.HasPrefix(candidate, "/") {
		candidate = p.Cwd + "/" + candidate
	}
	return path.Clean(candidate)
}

// Access returns the effective access of candidate (relative candidates resolve against
// the policy cwd) under the pure rules: entry precedence, the protected-metadata overlay
// and deny globs. It does not look at the filesystem (no skip handling, no gitdir
// targets, no symlinks); package sandbox enforces the launch-time parts.
func (p *Policy) Access(candidate string) Access {
	if !p.Restricted {
		return AccessWrite
	}
	abs := p.Abs(candidate)
	for _, g := range p.DenyGlobs {
		for q := abs; ; q = path.Dir(q) {
			if MatchGlob(g, q) {
				return AccessDeny
			}
			if q == "/" {
				break
			}
		}
	}
	a := p.entryAccess(abs)
	if a == AccessWrite && !p.FullWrite() {
		for _, w := range p.Entries {
			if w.Access != AccessWrite || !IsWithin(abs, w.Path) {
				continue
			}
			for _, n := range ProtectedMetadataNames {
				if IsWithin(abs, path.Join(w.Path, n)) && !p.writeEntryWithin(path.Join(w.Path, n)) {
					return AccessRead
				}
			}
		}
	}
	return a
}

// writeEntryWithin reports whether some write entry lies at or inside dir.
func (p *Policy) writeEntryWithin(dir string) bool {
	for _, e := range p.Entries {
		if e.Access == AccessWrite && IsWithin(e.Path, dir) {
			return true
		}
	}
	return false
}

// ProtectedNames returns the metadata names protected inside writable root w: those
// without a write entry at or inside w/N. Nil when the policy is FullWrite.
func (p *Policy) ProtectedNames(w string) []string {
	if p.FullWrite() {
		return nil
	}
	var out []string
	for _, n := range ProtectedMetadataNames {
		if !p.writeEntryWithin(path.Join(w, n)) {
			out = append(out, n)
		}
	}
	return out
}

// rootAccess is the tie-broken access of entries exactly at "/", 0 if none.
func (p *Policy) rootAccess() Access {
	var a Access
	for _, e := range p.Entries {
		if e.Path == "/" {
			a = max(a, e.Access)
		}
	}
	return a
}

// FullRead: not restricted; or "/" readable with no deny entry and no deny glob.
func (p *Policy) FullRead() bool {
	if !p.Restricted {
		return true
	}
	if r := p.rootAccess(); r != AccessRead && r != AccessWrite {
		return false
	}
	if len(p.DenyGlobs) > 0 {
		return false
	}
	for _, e := range p.Entries {
		if e.Access == AccessDeny {
			return false
		}
	}
	return true
}

// FullWrite: not restricted; or "/"=write and nothing narrows it. A read entry is
// shadowed by a write entry for the same path; a deny entry always narrows (deviation,
// stricter than the reference, which also lets a same-path write shadow a deny).
func (p *Policy) FullWrite() bool {
	if !p.Restricted {
		return true
	}
	if p.rootAccess() != AccessWrite || len(p.DenyGlobs) > 0 {
		return false
	}
	for _, e := range p.Entries {
		switch e.Access {
		case AccessDeny:
			return false
		case AccessRead:
			shadowed := false
			for _, w := range p.Entries {
				if w.Access == AccessWrite && w.Path == e.Path {
					shadowed = true
					break
				}
			}
			if !shadowed {
				return false
			}
		}
	}
	return true
}

// PlatformDefaults: restricted, not FullRead, and `minimal` readable.
func (p *Policy) PlatformDefaults() bool {
	return p.Restricted && !p.FullRead() && (p.Minimal == AccessRead || p.Minimal == AccessWrite)
}
