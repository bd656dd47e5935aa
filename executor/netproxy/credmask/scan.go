package credmask

// Masking inside values (§9.2), probed on 0.171.0 (conformance scenario
// credmask_embedded_values and the probes summarized here):
//
//   - Every variable that is not a canonical source is scanned. A brokered real value
//     is replaced in place by that credential's dummy where it is the whole value, and
//     where it occurs inside when it has a built-in token shape ("x<token>" →
//     "x<dummy>", "https://u:<token>@h/" → "https://u:<dummy>@h/") or, for a custom
//     provider, where one of its patterns matches exactly the real value outside a path
//     segment (inPathSegment). An unshaped
//     built-in value ("padded-value" in GITHUB_TOKEN) inside another value stays real
//     and unprotectedLogText is logged.
//   - In what is left, a built-in token shape is recognized anywhere (no left
//     boundary): a GitHub prefix (github_pat_, ghp_, gho_, ghu_, ghs_, ghr_) or "sk-",
//     then the longest run of [A-Za-z0-9_-], at least githubMinLen / openAIMinLen bytes
//     in all. A run followed by "." and a path segment that ends in "/" is a path
//     component ("ghp_….d/x"), not a token (but a real value registered elsewhere is
//     still replaced inside it: Prepare scans twice). A custom provider's pattern matches
//     anywhere (leftmost first) outside a path segment; a new value needs at least
//     minEmbeddedLen bytes ("cd34" stays real, a known one is masked at any length).
//   - Such a stray token becomes a credential of its own (a fresh dummy; one per
//     distinct value), bound like the provider's canonical variable and named after
//     the provider's first variable in the marker (GH_TOKEN, OPENAI_API_KEY, or the
//     custom provider's first env entry), even though that variable is not set.
//   - Each variable changed this way is listed as "@alias:NAME" with every dummy it
//     received.

import (
	"math/rand/v2"
	"slices"
	"strings"
)

// span is a part of a value to replace by a credential's dummy.
type span struct {
	start, end int
	cred       *credential
}

// tokenShape is a built-in provider's recognizable token: a prefix, a body of
// [A-Za-z0-9_-] and a minimum total length.
type tokenShape struct {
	prefixes []string
	minLen   int
}

var (
	githubShape = tokenShape{prefixes: githubPrefixes, minLen: githubMinLen}
	openAIShape = tokenShape{prefixes: []string{openAIKeyPrefix}, minLen: openAIMinLen}
)

func isTokenByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

func isPathByte(c byte) bool { return isTokenByte(c) || c == '.' }

// matchAt returns the end of the token of shape s starting at i in v, or -1.
func (s tokenShape) matchAt(v string, i int) int {
	for _, p := range s.prefixes {
		if !strings.HasPrefix(v[i:], p) {
			continue
		}
		end := i + len(p)
		for end < len(v) && end-i <= MaxCredentialLen && isTokenByte(v[end]) {
			end++
		}
		if end-i < s.minLen || end-i > MaxCredentialLen || pathComponentAt(v, end) {
			return -1
		}
		return end
	}
	return -1
}

// builtinShaped reports whether v as a whole is a recognized built-in token.
func builtinShaped(v string) bool {
	return githubShape.matchAt(v, 0) == len(v) || openAIShape.matchAt(v, 0) == len(v)
}

// pathComponentAt reports whether the token ending at end is the stem of a path
// component: "." then path bytes up to a "/" (probed: "ghp_….z/w" stays real,
// "ghp_….z" and "ghp_…/w" are masked).
func pathComponentAt(v string, end int) bool {
	if end >= len(v) || v[end] != '.' {
		return false
	}
	j := end
	for j < len(v) && isPathByte(v[j]) {
		j++
	}
	return j < len(v) && v[j] == '/'
}

// inPathSegment reports whether v[start:end] lies in a file-system path segment,
// probed for custom patterns on 0.171.0: the run of [A-Za-z0-9._-] around it follows
// a "/" ("/tmp/ab12/x", "/<tok>.txt") or is followed by a "/" and a path byte
// ("<tok>/x"); a URL other than file:// is no path ("https://h/<tok>/"). "x<tok>y",
// "ab12.txt/", "<tok>/", "a a<tok>/ x" and "<tok>/ y" are masked.
func inPathSegment(v string, start, end int) bool {
	if i := strings.Index(v[:start], "://"); i >= 0 && !strings.HasSuffix(v[:i], "file") {
		return false
	}
	rs, re := start, end
	for rs > 0 && isPathByte(v[rs-1]) {
		rs--
	}
	for re < len(v) && isPathByte(v[re]) {
		re++
	}
	if rs > 0 && v[rs-1] == '/' {
		return true
	}
	return re+1 < len(v) && v[re] == '/' && isPathByte(v[re+1])
}

// scanner masks the inside of values for one Prepare call.
type scanner struct {
	b         *Broker
	builtins  []*provider // github cloud first, then openai: the stray owners
	shapes    []tokenShape
	customs   []*provider
	r         *rand.Rand
	marker    *markerSet
	failedGen func(p *provider)
	// reserved are the values of inactive built-in sources (GH_ENTERPRISE_TOKEN
	// without an enterprise GH_HOST): never registered as strays (probed: such a
	// token stays real everywhere, though a registered value is still replaced in
	// them).
	reserved map[string]bool
	// active holds the keys of this launch's providers.
	active map[string]bool
	// unprotected is set when a real value stays inside another value.
	unprotected bool
	// known bounds the credentials whose real values realSpans looks for: the
	// canonical ones during the first pass, all of them (-1) during the second.
	known int
}

// registerCanonical masks the providers' own variables in out and returns their
// names.
func (s *scanner) registerCanonical(providers []*provider, env, out map[string]string) map[string]bool {
	canonical := map[string]bool{}
	for _, p := range providers {
		for _, k := range p.env {
			real := strings.TrimSpace(env[k])
			if !p.accepts(real) {
				continue
			}
			c := s.b.find(p, real)
			if c == nil {
				if s.b.isDummy(real) {
					continue
				}
				d, err := p.dummyFor(real, s.r)
				if err != nil {
					s.failedGen(p)
					continue
				}
				c = &credential{provider: p, real: NewSecret(real), dummy: d}
				s.b.creds = append(s.b.creds, c)
			}
			out[k] = c.dummy
			canonical[k] = true
			s.marker.add(k, c.dummy)
			s.marker.add(aliasPrefix+k, c.dummy)
		}
	}
	return canonical
}

// scanAll masks the values of keys in out, in two passes, as probed: the first
// registers every stray token (only the values known before it are cut out first:
// "aa<T>bb" registers "<T>bb" even when <T> is a stray elsewhere), the second replaces
// every registered real value wherever it occurs, longest first, so that a token seen
// alone in one variable is masked inside another too, even where its shape alone is
// not recognized there ("<T>x.z/w").
func (s *scanner) scanAll(keys []string, out map[string]string) {
	s.known = len(s.b.creds)
	for _, k := range keys {
		s.mask(out[k])
	}
	s.known = -1
	for _, k := range keys {
		v, used := s.mask(out[k])
		for _, c := range used {
			s.marker.add(aliasPrefix+k, c.dummy)
		}
		out[k] = v
	}
}

// realSpans finds the brokered real values inside v, longest first, without overlap.
func (s *scanner) realSpans(v string) []span {
	creds := slices.Clone(s.b.creds)
	if s.known >= 0 {
		creds = creds[:s.known]
	}
	// Only the credentials of providers active in this launch are looked for (probed:
	// a custom value registered by an earlier launch stays real in a launch whose
	// provider is disabled).
	creds = slices.DeleteFunc(creds, func(c *credential) bool { return !s.active[c.provider.key] })
	slices.SortStableFunc(creds, func(a, b *credential) int { return len(b.real.Reveal()) - len(a.real.Reveal()) })
	var out []span
	for _, c := range creds {
		real := c.real.Reveal()
		if v == real {
			return []span{{0, len(v), c}}
		}
		if !c.provider.builtin {
			continue // found by the provider's patterns (straySpans), as the reference does
		}
		if !builtinShaped(real) {
			// An unshaped built-in value ("padded-value") is replaced only as a whole;
			// a copy inside another value stays real and is reported (probed).
			if len(real) >= minEmbeddedLen && strings.Contains(v, real) {
				s.unprotected = true
			}
			continue
		}
		for off := 0; off < len(v); {
			i := strings.Index(v[off:], real)
			if i < 0 {
				break
			}
			sp := span{off + i, off + i + len(real), c}
			if !overlaps(out, sp) {
				out = append(out, sp)
			}
			off = sp.end
		}
	}
	return out
}

func overlaps(spans []span, x span) bool {
	for _, s := range spans {
		if x.start < s.end && s.start < x.end {
			return true
		}
	}
	return false
}

// straySpans registers the token-shaped values of v[lo:hi] and returns the spans of
// the custom providers' matches. Every occurrence of a built-in prefix is a
// candidate, also inside a longer token (probed: "ghp_<A>ghp_<B>" registers both,
// the longer one is replaced and the shorter is replaced where it stands alone);
// their spans come from realSpans.
func (s *scanner) straySpans(v string, lo, hi int) []span {
	part := v[:hi]
	for i := lo; i < hi; i++ {
		for j, sh := range s.shapes {
			if end := sh.matchAt(part, i); end >= 0 {
				s.register(s.builtins[j], part[i:end])
				break
			}
		}
	}
	var out []span
	for _, p := range s.customs {
		for _, g := range p.gens {
			for _, m := range g.find.FindAllStringIndex(v[lo:hi], maxStraysPerValue) {
				sp := span{lo + m[0], lo + m[1], nil}
				if sp.start == sp.end || overlaps(out, sp) || inPathSegment(v, sp.start, sp.end) {
					continue
				}
				val := v[sp.start:sp.end]
				// A new value needs minEmbeddedLen bytes and must not run on into a word
				// character (probed: "a<tok>" and "-<tok>." masked, "<tok>z", "<tok>_" and "<tok>-x"
				// stay real).
				if sp.cred = s.b.find(p, val); sp.cred == nil && len(val) >= minEmbeddedLen && !(sp.end < len(v) && isTokenByte(v[sp.end])) {
					sp.cred = s.register(p, val)
				}
				if sp.cred != nil {
					out = append(out, sp)
				}
			}
		}
	}
	return out
}

// register returns the credential of p for a stray value, minting it on first sight;
// nil when the value is a dummy already or cannot be brokered.
func (s *scanner) register(p *provider, real string) *credential {
	if s.b.isDummy(real) || s.reserved[real] || !p.accepts(real) {
		return nil
	}
	if c := s.b.find(p, real); c != nil {
		return c
	}
	d, err := p.dummyFor(real, s.r)
	if err != nil {
		s.failedGen(p)
		return nil
	}
	c := &credential{provider: p, real: NewSecret(real), dummy: d}
	s.b.creds = append(s.b.creds, c)
	s.marker.add(p.env[0], d)
	return c
}

// mask returns v with every brokered or token-shaped value replaced by its dummy, and
// the credentials used.
func (s *scanner) mask(v string) (string, []*credential) {
	spans := s.realSpans(v)
	slices.SortFunc(spans, func(a, b span) int { return a.start - b.start })
	var all []span
	lo := 0
	for _, sp := range append(spans, span{start: len(v), end: len(v)}) {
		all = append(all, s.straySpans(v, lo, sp.start)...)
		if sp.cred != nil {
			all = append(all, sp)
		}
		lo = sp.end
	}
	if len(all) == 0 {
		return v, nil
	}
	slices.SortFunc(all, func(a, b span) int { return a.start - b.start })
	var sb strings.Builder
	var used []*credential
	prev := 0
	for _, sp := range all {
		sb.WriteString(v[prev:sp.start])
		sb.WriteString(sp.cred.dummy)
		prev = sp.end
		if !slices.Contains(used, sp.cred) {
			used = append(used, sp.cred)
		}
	}
	sb.WriteString(v[prev:])
	return sb.String(), used
}

// markerSet is the list of [name, dummy] pairs of EnvBrokeredCredentials, without
// repeats (a name may carry several dummies).
type markerSet struct{ pairs [][2]string }

func (m *markerSet) add(name, dummy string) {
	p := [2]string{name, dummy}
	if !slices.Contains(m.pairs, p) {
		m.pairs = append(m.pairs, p)
	}
}
