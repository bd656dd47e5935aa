package netproxy

// Domain patterns (spec/network-proxy.md §2.1 "Pattern validation", §5.2).
//
// Accepted forms: an exact host ("example.com", an IPv4 literal, an IPv6 literal bare or
// in brackets), "*.example.com" (subdomains only), "**.example.com" (apex and
// subdomains), '?' for exactly one character, and bare "*" (every host) where the list
// allows it (not in the deny list). Patterns and hosts are compared after normalisation:
// surrounding whitespace trimmed, ASCII lower-cased, trailing dots removed, a single
// ":port" dropped, brackets of an IPv6 literal removed.
//
// Validation checks, in this order, each with the reference's text: the global wildcard
// (deny list only), forbidden characters ('{', '}', '\\', '/', whitespace inside), a
// repeated wildcard after the scope prefix, brackets that are not an IPv6 literal or
// [*], and an empty result.

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"unicode"
)

// errGlobalWildcard marks the bare "*" in a list that refuses it; the caller words it.
var errGlobalWildcard = errors.New("global wildcard")

// patternSet is a compiled list of domain patterns. Immutable; safe for concurrent use.
type patternSet struct {
	globs [][]rune // normalised, expanded, deduplicated
}

// compilePatterns validates and compiles patterns in order; the first invalid one is
// reported. allowGlobal says whether bare "*" is accepted.
func compilePatterns(patterns []string, allowGlobal bool) (*patternSet, error) {
	s := &patternSet{}
	seen := map[string]bool{}
	for _, pattern := range patterns {
		if !allowGlobal && isGlobalPattern(pattern) {
			return nil, errGlobalWildcard
		}
		raw := strings.TrimSpace(pattern)
		if strings.ContainsAny(raw, "{}\\/") || strings.IndexFunc(raw, unicode.IsSpace) >= 0 {
			return nil, fmt.Errorf("unsupported domain pattern syntax: %s", pattern)
		}
		host := stripScope(raw)
		if strings.Contains(host, "**") {
			return nil, fmt.Errorf("unsupported repeated wildcard: %s", pattern)
		}
		if strings.ContainsAny(host, "[]") && !validBrackets(host) {
			return nil, fmt.Errorf("brackets are only supported for IPv6 literals or [*]: %s", pattern)
		}
		for _, c := range expandPattern(normalizePattern(pattern)) {
			if seen[c] {
				continue
			}
			seen[c] = true
			if c == "" {
				return nil, errors.New("domain pattern is empty")
			}
			s.globs = append(s.globs, []rune(c))
		}
	}
	return s, nil
}

// stripScope removes a leading "**." or "*." from p.
func stripScope(p string) string {
	if rest, ok := strings.CutPrefix(p, "**."); ok {
		return rest
	}
	if rest, ok := strings.CutPrefix(p, "*."); ok {
		return rest
	}
	return p
}

// validBrackets reports whether host is "[ipv6]" or "[*]" followed only by dots or by a
// ":port" suffix.
func validBrackets(host string) bool {
	inner, ok := strings.CutPrefix(host, "[")
	if !ok {
		return false
	}
	ip, suffix, ok := strings.Cut(inner, "]")
	if !ok || strings.ContainsAny(ip, "[]") || strings.ContainsAny(suffix, "[]") {
		return false
	}
	norm := normalizeLiteral(ip)
	unscoped, _, _ := strings.Cut(norm, "%")
	if norm != "*" && !isIPv6(unscoped) {
		return false
	}
	return strings.Trim(suffix, ".") == "" || strings.HasPrefix(suffix, ":")
}

// isGlobalPattern reports whether pattern normalises to the bare "*".
func isGlobalPattern(pattern string) bool {
	for _, c := range expandPattern(normalizePattern(pattern)) {
		if c == "*" {
			return true
		}
	}
	return false
}

// normalizePattern normalises the host part of a pattern, keeping its scope prefix.
func normalizePattern(pattern string) string {
	p := strings.TrimSpace(pattern)
	if p == "*" {
		return p
	}
	prefix := ""
	switch {
	case strings.HasPrefix(p, "**."):
		prefix = "**."
	case strings.HasPrefix(p, "*."):
		prefix = "*."
	}
	return prefix + NormalizeHost(p[len(prefix):])
}

// expandPattern turns a scoped pattern into globs: "*.d" → "?*.d"; "**.d" → "d" and
// "?*.d"; a scope with nothing after it → "" (reported as empty).
func expandPattern(p string) []string {
	p = strings.TrimSpace(p)
	domain := stripScope(p)
	if domain == p {
		return []string{p}
	}
	domain = strings.TrimSpace(domain)
	if domain == "" {
		return []string{""}
	}
	if strings.HasPrefix(p, "**.") {
		return []string{domain, "?*." + domain}
	}
	return []string{"?*." + domain}
}

// NormalizeHost normalises a host for matching: whitespace trimmed; an IPv6 literal's
// brackets, or a single ":port", removed; ASCII lower-cased; trailing dots removed.
func NormalizeHost(host string) string {
	host = strings.TrimSpace(host)
	if strings.HasPrefix(host, "[") {
		if end := strings.IndexByte(host, ']'); end >= 0 {
			return normalizeLiteral(host[1:end])
		}
	}
	if strings.Count(host, ":") == 1 {
		h, _, _ := strings.Cut(host, ":")
		return normalizeLiteral(h)
	}
	return normalizeLiteral(host)
}

// normalizeLiteral lower-cases ASCII, drops trailing dots, and writes a scoped IP
// literal's "%25" zone delimiter as "%".
func normalizeLiteral(host string) string {
	host = strings.TrimRight(asciiLower(host), ".")
	if isIP(host) {
		return host
	}
	for _, delim := range []string{"%25", "%"} {
		if ip, scope, ok := strings.Cut(host, delim); ok && isIP(ip) {
			return ip + "%" + scope
		}
	}
	return host
}

// isIP reports whether s is an IPv4 or IPv6 literal without a zone.
func isIP(s string) bool {
	if strings.Contains(s, "%") {
		return false
	}
	_, err := netip.ParseAddr(s)
	return err == nil
}

func isIPv6(s string) bool {
	if strings.Contains(s, "%") {
		return false
	}
	a, err := netip.ParseAddr(s)
	return err == nil && a.Is6()
}

func asciiLower(s string) string {
	for i := 0; i < len(s); i++ {
		if 'A' <= s[i] && s[i] <= 'Z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if 'A' <= b[j] && b[j] <= 'Z' {
					b[j] += 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return s
}

// match reports whether any pattern matches host (already normalised).
func (s *patternSet) match(host string) bool {
	if s == nil {
		return false
	}
	h := []rune(host)
	for _, g := range s.globs {
		if globMatch(g, h) {
			return true
		}
	}
	return false
}

// globMatch matches '*' (any run, possibly empty) and '?' (one character), ASCII
// case-insensitively. Only the latest star is retried, so the work is bounded by
// len(pattern)·len(host).
func globMatch(pattern, host []rune) bool {
	p, h := 0, 0
	starP, starH := -1, 0
	for h < len(host) {
		switch {
		case p < len(pattern) && pattern[p] == '*':
			starP, starH = p+1, h
			p++
		case p < len(pattern) && (pattern[p] == '?' || foldEqual(pattern[p], host[h])):
			p++
			h++
		case starP >= 0:
			starH++
			p, h = starP, starH
		default:
			return false
		}
	}
	for ; p < len(pattern); p++ {
		if pattern[p] != '*' {
			return false
		}
	}
	return true
}

func foldEqual(a, b rune) bool {
	if 'A' <= a && a <= 'Z' {
		a += 'a' - 'A'
	}
	if 'A' <= b && b <= 'Z' {
		b += 'a' - 'A'
	}
	return a == b
}
