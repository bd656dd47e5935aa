package credmask

// Credential providers: the built-in ones (GitHub cloud, GitHub Enterprise, OpenAI; from
// the reference's credential_broker/providers.rs and probes of 0.171.0) and the custom
// ones of credentialProviders, compiled with the reference's log texts.
//
// Probed on 0.171.0: any non-empty GITHUB_TOKEN is masked (even "x"), as a 40-byte
// "ghp_masked…" dummy; the GitHub prefix is kept when the value has one (github_pat_,
// ghp_, gho_, ghu_, ghs_, ghr_); OPENAI_API_KEY keeps "sk-<kind>-" and becomes
// "sk-proj-masked…" of the same length; GH_ENTERPRISE_TOKEN is brokered only when GH_HOST
// names a non-cloud host (without it, it is masked only as an alias).

import (
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net"
	"slices"
	"sort"
	"strings"
)

// provider is a compiled provider; immutable.
type provider struct {
	id string
	// key identifies the provider across the launches of a session (Registry): the
	// id, the configuration and the resolved destinations.
	key     string
	builtin bool
	env     []string
	dests   []destination // bound at Prepare time for url_prefix_from_env
	fromEnv string        // url_prefix_from_env, "" when absent
	auth    []AuthScheme
	header  string // canonical header name for AuthHeader
	prefix  string // value prefix for AuthHeader
	gens    []*generator
	dummyFn func(real string, r *rand.Rand) (string, error)
}

var (
	githubPrefixes       = []string{"github_pat_", "ghp_", "gho_", "ghu_", "ghs_", "ghr_"}
	githubCloudEnv       = []string{"GH_TOKEN", "GITHUB_TOKEN"}
	githubEnterpriseEnv  = []string{"GH_ENTERPRISE_TOKEN", "GITHUB_ENTERPRISE_TOKEN"}
	openAIEnv            = []string{"OPENAI_API_KEY"}
	builtinAuth          = []AuthScheme{AuthBearer, AuthToken, AuthBasic}
	builtinCredentialEnv = slices.Concat([]string{envGHHost}, githubCloudEnv, githubEnterpriseEnv, openAIEnv)
)

// httpsDest is a built-in binding: the host over https on any port (probed on 0.171.0:
// GH_HOST=127.0.0.1 intercepts https://127.0.0.1:<any port>).
func httpsDest(host string, wildcard bool) destination {
	return destination{scheme: "https", host: host, wildcard: wildcard, port: 443, anyPort: true, path: "/"}
}

func isGitHubCloudHost(h string) bool {
	return h == "github.com" || h == "api.github.com" || strings.HasSuffix(h, ".ghe.com")
}

// builtinProviders returns the built-in providers active for env, in the reference's
// order.
func builtinProviders(env map[string]string) []*provider {
	out := []*provider{{
		id: "github", key: "github", builtin: true, env: githubCloudEnv, auth: builtinAuth,
		dests: []destination{httpsDest("github.com", false), httpsDest("api.github.com", false), httpsDest("ghe.com", true)},
		dummyFn: func(real string, r *rand.Rand) (string, error) {
			return shapedDummy(real, githubPrefix(real), githubMinLen, r), nil
		},
	}}
	if host := ghHost(env); host != "" && !isGitHubCloudHost(host) {
		out = append(out, &provider{
			id: "github-enterprise", key: "github-enterprise\x00" + host, builtin: true, env: githubEnterpriseEnv, auth: builtinAuth,
			dests: []destination{httpsDest(host, false)},
			dummyFn: func(real string, r *rand.Rand) (string, error) {
				return shapedDummy(real, githubPrefix(real), githubMinLen, r), nil
			},
		})
	}
	out = append(out, &provider{
		id: "openai", key: "openai", builtin: true, env: openAIEnv, auth: builtinAuth,
		dests: []destination{httpsDest("api.openai.com", false)},
		dummyFn: func(real string, r *rand.Rand) (string, error) {
			return shapedDummy(real, openAIPrefix(real), openAIMinLen, r), nil
		},
	})
	return out
}

func ghHost(env map[string]string) string {
	h := strings.TrimSpace(env[envGHHost])
	if _, rest, ok := strings.Cut(h, "://"); ok {
		h = rest
	}
	h, _, _ = strings.Cut(h, "/")
	if hh, _, err := net.SplitHostPort(h); err == nil {
		h = hh
	}
	return normalizeHost(h)
}

func githubPrefix(v string) string {
	for _, p := range githubPrefixes {
		if strings.HasPrefix(v, p) {
			return p
		}
	}
	return defaultGitHubPrefx
}

func openAIPrefix(v string) string {
	rest, ok := strings.CutPrefix(v, openAIKeyPrefix)
	if !ok {
		return openAIKeyPrefix
	}
	if i := strings.IndexByte(rest, '-'); i >= 0 && isAlnum(rest[:i]) {
		return v[:len(openAIKeyPrefix)+i+1]
	}
	return openAIKeyPrefix
}

func isAlnum(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// shapedDummy is prefix + "masked" + random letters and digits, as long as real and
// at least minLen bytes.
func shapedDummy(real, prefix string, minLen int, r *rand.Rand) string {
	n := max(len(real), minLen, len(prefix)+len(maskedMarker)+8)
	var b strings.Builder
	b.Grow(n)
	b.WriteString(prefix)
	b.WriteString(maskedMarker)
	for b.Len() < n {
		b.WriteRune(alnum[r.IntN(len(alnum))])
	}
	return b.String()
}

// dummyFor returns a dummy for real from the provider, different from real.
func (p *provider) dummyFor(real string, r *rand.Rand) (string, error) {
	for range generateAttempts {
		d, err := p.dummyFn(real, r)
		if err != nil {
			return "", err
		}
		if d != real {
			return d, nil
		}
	}
	return "", errGenerate
}

// accepts reports whether real is a value this provider brokers.
func (p *provider) accepts(real string) bool {
	if real == "" || len(real) > MaxCredentialLen || !headerSafe(real) {
		return false
	}
	if p.builtin {
		return true
	}
	return p.matchingGenerator(real) != nil
}

func (p *provider) matchingGenerator(real string) *generator {
	for _, g := range p.gens {
		if g.full.MatchString(real) {
			return g
		}
	}
	return nil
}

// headerSafe reports whether v can travel in a header value unchanged: visible ASCII
// and inner spaces only.
func headerSafe(v string) bool {
	for i := 0; i < len(v); i++ {
		if c := v[i]; c < 0x20 || c > 0x7e {
			return false
		}
	}
	return true
}

// compileProviders validates the decoded custom providers. An invalid provider is
// skipped with a warning in the reference's words ("ignoring invalid credential
// provider", provider=<id>, error=<why>); a provider whose env overlaps an earlier
// one (by id order) is skipped with "ignoring credential provider with an overlapping
// environment source". It never fails: a start with bad providers succeeds (§9.4).
// Ids are processed in sorted order; at most MaxProviders are kept.
func compileProviders(entries []ProviderEntry, log *slog.Logger) []*provider {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	sorted := slices.Clone(entries)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].ID < sorted[j].ID })
	var out []*provider
	claimed := map[string]bool{}
	for _, e := range sorted {
		p, err := compileProvider(e)
		if err != nil {
			log.Warn("ignoring invalid credential provider", "provider", e.ID, "error", err.Error())
			continue
		}
		if slices.ContainsFunc(p.env, func(k string) bool { return claimed[k] }) {
			log.Warn("ignoring credential provider with an overlapping environment source", "provider", e.ID)
			continue
		}
		if len(out) >= MaxProviders {
			log.Warn("ignoring invalid credential provider", "provider", e.ID, "error", "too many credential providers")
			continue
		}
		for _, k := range p.env {
			claimed[k] = true
		}
		out = append(out, p)
	}
	return out
}

func compileProvider(e ProviderEntry) (*provider, error) {
	c := e.Config
	id := e.ID
	if id == "" {
		return nil, fmt.Errorf("credential provider name must not be empty")
	}
	env := slices.DeleteFunc(slices.Clone(c.Env), func(k string) bool { return strings.TrimSpace(k) == "" })
	if len(env) == 0 {
		return nil, fmt.Errorf("credential provider `%s` has no environment keys", id)
	}
	for _, k := range env {
		if slices.Contains(builtinCredentialEnv, k) || strings.ContainsAny(k, "=\x00") {
			return nil, fmt.Errorf("credential provider `%s` overlaps a built-in credential source", id)
		}
	}
	if len(c.Patterns) == 0 {
		return nil, fmt.Errorf("credential provider `%s` has no credential patterns", id)
	}
	p := &provider{id: id, env: env, key: fmt.Sprintf("%s\x00%q", id, []any{env, c.Patterns, c.Auth, deref(c.Header), deref(c.Prefix)})}
	for _, pat := range c.Patterns {
		g, err := newGenerator(pat)
		if err != nil || len(pat) > MaxPatternLen || g.full.MatchString("") || g.full.MatchString(strings.Repeat("\x01", 3)) {
			// Matching the empty string or control bytes means the pattern is no shape
			// at all (".*", "a*", "[\\s\\S]+").
			return nil, fmt.Errorf("invalid credential pattern for provider `%s`", id)
		}
		p.gens = append(p.gens, g)
	}
	for _, u := range c.URLPrefixes {
		d, err := parseDestination(u)
		if err != nil {
			return nil, fmt.Errorf("invalid destination for credential provider `%s`", id)
		}
		p.dests = append(p.dests, d)
	}
	if c.URLPrefixFromEnv != nil {
		p.fromEnv = strings.TrimSpace(*c.URLPrefixFromEnv)
		if p.fromEnv == "" {
			return nil, fmt.Errorf("invalid destination for credential provider `%s`", id)
		}
	}
	if len(p.dests) == 0 && p.fromEnv == "" {
		return nil, fmt.Errorf("credential provider `%s` has no destination URL prefixes", id)
	}
	if err := p.compileAuth(c); err != nil {
		return nil, err
	}
	p.dummyFn = func(real string, r *rand.Rand) (string, error) {
		g := p.matchingGenerator(real)
		if g == nil {
			return "", errGenerate
		}
		return g.Generate(r)
	}
	return p, nil
}

// compileAuth sets the auth schemes (default bearer), the header and the prefix.
func (p *provider) compileAuth(c ProviderConfig) error {
	id := p.id
	p.auth = slices.Compact(slices.Clone(c.Auth))
	if len(p.auth) == 0 {
		p.auth = []AuthScheme{AuthBearer}
	}
	wantsHeader := slices.Contains(p.auth, AuthHeader)
	hasHeader := c.Header != nil && *c.Header != ""
	if wantsHeader != hasHeader || (hasHeader && !validHeaderName(*c.Header)) {
		return fmt.Errorf("credential provider `%s` requires a header name exactly when using header authentication", id)
	}
	if hasHeader {
		p.header = canonicalHeader(*c.Header)
	}
	if c.Prefix != nil {
		if !headerSafe(*c.Prefix) {
			return fmt.Errorf("invalid credential prefix for provider `%s`", id)
		}
		p.prefix = *c.Prefix
	}
	return nil
}

// bind returns p with its url_prefix_from_env destination resolved against env, or
// nil when the provider has no destination in this environment. With allowLocal
// (proxy.allowLocalBinding) a provider with a loopback destination is dropped: the
// child could reach it without the proxy. unprotected is set when the provider's credential must stay
// real for lack of a destination (0.171.0 then logs unprotectedLogText once).
func (p *provider) bind(env map[string]string, allowLocal bool, log *slog.Logger, unprotected *bool) *provider {
	q := *p
	if allowLocal {
		q.dests = slices.DeleteFunc(slices.Clone(p.dests), func(d destination) bool { return !d.wildcard && isLoopbackHost(d.host) })
	}
	if q.fromEnv != "" {
		if v, ok := env[q.fromEnv]; ok && strings.TrimSpace(v) != "" {
			d, err := parseDestination(v)
			if err != nil {
				log.Warn("ignoring invalid credential provider", "provider", p.id,
					"error", fmt.Sprintf("invalid destination for credential provider `%s`", p.id))
				return nil
			}
			if !allowLocal || d.wildcard || !isLoopbackHost(d.host) {
				q.dests = append(q.dests, d)
			}
		}
	}
	if len(q.dests) == 0 || len(q.dests) < len(p.dests) {
		// A loopback destination the child may reach directly disables the provider
		// (probed: "http://127.0.0.1:9/" next to "https://dok.example/" keeps DT real).
		for _, k := range p.env {
			if p.accepts(strings.TrimSpace(env[k])) {
				*unprotected = true
			}
		}
		return nil
	}
	q.key = fmt.Sprintf("%s\x00%v", p.key, q.dests)
	return &q
}

func deref(s *string) string {
	if s == nil {
		return "\x00"
	}
	return *s
}
