package policy

// Git-style glob matching (spec/sandbox.md §2.2): "*" and "?" never cross "/", "**" as
// a whole component spans zero or more directories, "[...]" classes (with "!" or "^"
// negation and ranges), an unclosed "[" is literal, "\" escapes the next byte.
// Matching is on whole clean absolute paths and runs in O(len(pattern)·len(path)) with
// memoization, so hostile patterns cannot blow up.

import "strings"

// MatchGlob reports whether name matches pattern.
func MatchGlob(pattern, name string) bool {
	if len(pattern) > maxGlobLen {
		return false
	}
	m := globMatcher{pat: pattern, name: name, memo: make(map[[2]int]bool)}
	return m.match(0, 0)
}

type globMatcher struct {
	pat, name string
	memo      map[[2]int]bool
}

func (m *globMatcher) match(pi, ni int) bool {
	key := [2]int{pi, ni}
	if v, ok := m.memo[key]; ok {
		return v
	}
	v := m.matchSlow(pi, ni)
	m.memo[key] = v
	return v
}

// matchSlow is the matcher's state machine: one case per pattern token (`**/`, `*`,
// `?`, classes, literals) over the pattern and name positions. Its branch count is the
// grammar's, so it is exempt from the complexity bound (docs/architecture.md).
func (m *globMatcher) matchSlow(pi, ni int) bool {
	pat, name := m.pat, m.name
	for pi < len(pat) {
		c := pat[pi]
		switch {
		case c == '*' && pi+1 < len(pat) && pat[pi+1] == '*' && (pi == 0 || pat[pi-1] == '/') &&
			(pi+2 == len(pat) || pat[pi+2] == '/'):
			// "**" component.
			if pi+2 == len(pat) {
				return true // matches everything below
			}
			// "**/" : zero or more whole directories.
			rest := pi + 3
			if m.match(rest, ni) {
				return true
			}
			for j := ni; j < len(name); j++ {
				if name[j] == '/' && m.match(rest, j+1) {
					return true
				}
			}
			return false
		case c == '*':
			for pi < len(pat) && pat[pi] == '*' {
				pi++
			}
			for j := ni; ; j++ {
				if m.match(pi, j) {
					return true
				}
				if j >= len(name) || name[j] == '/' {
					return false
				}
			}
		case c == '?':
			if ni >= len(name) || name[ni] == '/' {
				return false
			}
			pi++
			ni++
		case c == '[':
			end, ok := classEnd(pat, pi)
			if !ok {
				if ni >= len(name) || name[ni] != '[' {
					return false
				}
				pi++
				ni++
				continue
			}
			if ni >= len(name) || name[ni] == '/' || !classMatch(pat[pi+1:end], name[ni]) {
				return false
			}
			pi = end + 1
			ni++
		case c == '\\' && pi+1 < len(pat):
			if ni >= len(name) || name[ni] != pat[pi+1] {
				return false
			}
			pi += 2
			ni++
		default:
			if ni >= len(name) || name[ni] != c {
				return false
			}
			pi++
			ni++
		}
	}
	return ni == len(name)
}

// classEnd returns the index of the "]" closing the class opened at pat[start].
func classEnd(pat string, start int) (int, bool) {
	i := start + 1
	if i < len(pat) && (pat[i] == '!' || pat[i] == '^') {
		i++
	}
	if i < len(pat) && pat[i] == ']' {
		i++
	}
	for ; i < len(pat); i++ {
		switch pat[i] {
		case '\\':
			i++
		case ']':
			return i, true
		}
	}
	return 0, false
}

func classMatch(class string, c byte) bool {
	neg := false
	if len(class) > 0 && (class[0] == '!' || class[0] == '^') {
		neg = true
		class = class[1:]
	}
	matched := false
	for i := 0; i < len(class); i++ {
		lo := class[i]
		if lo == '\\' && i+1 < len(class) {
			i++
			lo = class[i]
		}
		hi := lo
		if i+2 < len(class) && class[i+1] == '-' {
			hi = class[i+2]
			if hi == '\\' && i+3 < len(class) {
				hi = class[i+3]
				i++
			}
			i += 2
		}
		if lo <= c && c <= hi {
			matched = true
		}
	}
	return matched != neg
}

// GlobStaticPrefix returns the directory part of pattern before its first
// metacharacter ("/a/b/*.pem" -> "/a/b"), unescaped. ok is false when the pattern has
// no metacharacter (then the whole unescaped pattern is a literal path).
func GlobStaticPrefix(pattern string) (dir string, ok bool) {
	var lit strings.Builder
	for i := 0; i < len(pattern); i++ {
		c := pattern[i]
		switch {
		case c == '\\' && i+1 < len(pattern):
			i++
			lit.WriteByte(pattern[i])
		case c == '*' || c == '?' || c == '[' && hasClassEnd(pattern, i):
			s := lit.String()
			if j := strings.LastIndexByte(s, '/'); j >= 0 {
				return s[:j], true
			}
			return "", true
		default:
			lit.WriteByte(c)
		}
	}
	return lit.String(), false
}

func hasClassEnd(pat string, i int) bool { _, ok := classEnd(pat, i); return ok }
