package credmask

// The broker: the credentials of one masked launch and the header rewriting of §9.3.
//
// Rewriting rules, per request, for the credentials whose destinations contain it
// (observed on codex 0.171.0 for plain HTTP to a loopback custom provider: bearer in
// any case, token, "Bearer  <dummy>" sent as "Bearer <real>", over-long and embedded
// tokens untouched, paths outside the prefix or with encoded dots or slashes
// untouched, basic user and password merged, header + prefix exact):
//
//   - bearer / token: an Authorization value "<Scheme> <dummy>" (scheme
//     case-insensitive) becomes "<Scheme> <real>"; the token must equal the dummy
//     exactly: a longer token that merely contains it is "over-long" and untouched.
//   - basic: "Basic base64(user:password)": a user or a password equal to a dummy is
//     replaced; user and password may come from two different credentials (merged).
//   - header (custom providers): the provider's header, exactly prefix + dummy.
//   - Built-in providers accept bearer, token and basic (git sends basic with the token
//     as password).
//   - A repeated header is judged by its first line only; when that line is
//     translated, every line of the header is replaced by the one translated line
//     (probed on 0.171.0: "Bearer <dummy>" twice, or followed by "Bearer other",
//     arrives as one "Bearer <real>"; "Bearer other" then "Bearer <dummy>" arrives
//     unchanged). "Bearer\t<dummy>" and "Bearer <dummy>, Bearer <dummy>" are not
//     translated. When two credentials would rewrite one header differently (and it
//     is not a basic user/password merge), the header is ambiguous and left
//     untranslated.
//   - A request outside a credential's destinations (other host, port, scheme or path
//     prefix) keeps the dummy: it is forwarded unchanged, as the reference does.
//   - Custom providers also refuse a path that is unsafe for authorization.

import (
	"encoding/base64"
	"net/http"
	"net/textproto"
	"slices"
	"strings"
)

// credential is one brokered value; immutable after Prepare.
type credential struct {
	provider *provider
	real     Secret
	dummy    string
}

// Broker holds the credentials of one masked launch. It is immutable after Prepare
// and safe for concurrent use. It never logs and its String method prints no secret.
type Broker struct {
	creds []*credential
}

// String describes the broker without any value.
func (b *Broker) String() string {
	if b == nil {
		return "credmask.Broker(nil)"
	}
	ids := make([]string, len(b.creds))
	for i, c := range b.creds {
		ids[i] = c.provider.id
	}
	return "credmask.Broker{providers: [" + strings.Join(ids, " ") + "]}"
}

// Len is the number of brokered credentials.
func (b *Broker) Len() int {
	if b == nil {
		return 0
	}
	return len(b.creds)
}

func (b *Broker) find(p *provider, real string) *credential {
	for _, c := range b.creds {
		if c.provider.key == p.key && c.real.Reveal() == real {
			return c
		}
	}
	return nil
}

func (b *Broker) isDummy(v string) bool {
	for _, c := range b.creds {
		if c.dummy == v {
			return true
		}
	}
	return false
}

// Intercepts reports whether a CONNECT tunnel to host:port must be intercepted (MITM
// with the CA) because a brokered credential is bound to it over HTTPS. Other tunnels
// stay opaque.
func (b *Broker) Intercepts(host string, port int) bool { return b.boundTo("https", host, port) }

// HandlesPlainHTTP reports whether a plain-HTTP request to host:port may need
// rewriting (a credential is bound to it over http).
func (b *Broker) HandlesPlainHTTP(host string, port int) bool { return b.boundTo("http", host, port) }

// boundTo reports whether a brokered credential is bound to host:port over scheme; a nil
// Broker binds nothing.
func (b *Broker) boundTo(scheme, host string, port int) bool {
	if b == nil {
		return false
	}
	host = normalizeHost(host)
	for _, c := range b.creds {
		for _, d := range c.provider.dests {
			if d.scheme == scheme && d.portMatches(port) && d.matchesHost(host) {
				return true
			}
		}
	}
	return false
}

// RewriteResult says what RewriteHeaders did; it holds no value.
type RewriteResult struct {
	// Rewritten lists the header names (canonical) whose dummy became real.
	Rewritten []string
	// Ambiguous lists headers left untranslated because credentials disagreed or the
	// header was repeated.
	Ambiguous []string
}

type translation struct {
	cred  *credential
	value string
	// basic user/password bookkeeping for merges
	basic          bool
	user, password string
	userChanged    bool
	passChanged    bool
}

// HeaderLine is one request header line as the proxy will forward it; Name keeps its
// bytes (matching is case-insensitive).
type HeaderLine struct{ Name, Value string }

// headerAccess abstracts the two header representations.
type headerAccess interface {
	// first returns the first value of name (case-insensitive).
	first(name string) (string, bool)
	// set replaces every line of name by one line holding v, where the first was.
	set(name, v string)
}

type stdHeader http.Header

func (h stdHeader) first(name string) (string, bool) {
	vs := http.Header(h).Values(name)
	if len(vs) == 0 {
		return "", false
	}
	return vs[0], true
}

func (h stdHeader) set(name, v string) { http.Header(h).Set(name, v) }

type lineHeader struct{ lines []HeaderLine }

func (l *lineHeader) first(name string) (string, bool) {
	for _, x := range l.lines {
		if strings.EqualFold(x.Name, name) {
			return x.Value, true
		}
	}
	return "", false
}

func (l *lineHeader) set(name, v string) {
	out := l.lines[:0]
	seen := false
	for _, x := range l.lines {
		if strings.EqualFold(x.Name, name) {
			if seen {
				continue
			}
			seen = true
			x.Value = v
		}
		out = append(out, x)
	}
	clear(l.lines[len(out):])
	l.lines = out
}

// RewriteHeaders swaps dummies for real values in h, in place, for the credentials
// authorized for req. h is the request's header as it will be forwarded. It is safe
// to call on any input: values longer than MaxHeaderValueLen are not inspected.
func (b *Broker) RewriteHeaders(req Request, h http.Header) RewriteResult {
	return b.rewrite(req, stdHeader(h))
}

// RewriteLines is RewriteHeaders over ordered header lines (the netproxy forwarder's
// representation). It returns the lines to forward: lines is reused, names and order
// are kept, and a rewritten header's repeats are dropped (only its first line, now
// translated, remains).
func (b *Broker) RewriteLines(req Request, lines []HeaderLine) ([]HeaderLine, RewriteResult) {
	l := &lineHeader{lines: lines}
	res := b.rewrite(req, l)
	return l.lines, res
}

func (b *Broker) rewrite(req Request, h headerAccess) RewriteResult {
	var res RewriteResult
	if b == nil || len(b.creds) == 0 {
		return res
	}
	pathOK := pathSafeForAuthorization(req.normalizedPath())
	found := map[string][]translation{}
	for _, c := range b.creds {
		if !c.authorizedFor(req) || (!c.provider.builtin && !pathOK) {
			continue
		}
		for _, a := range c.provider.auth {
			name := "Authorization"
			if a == AuthHeader {
				name = c.provider.header
			}
			v, ok := h.first(name)
			if !ok || len(v) > MaxHeaderValueLen {
				continue
			}
			if t, ok := c.translate(a, v); ok {
				found[name] = append(found[name], t)
			}
		}
	}
	for name, ts := range found {
		if containsStr(res.Ambiguous, name) {
			continue
		}
		v, ok := resolve(ts)
		if !ok {
			res.Ambiguous = append(res.Ambiguous, name)
			continue
		}
		h.set(name, v)
		res.Rewritten = append(res.Rewritten, name)
	}
	slices.Sort(res.Rewritten)
	slices.Sort(res.Ambiguous)
	return res
}

func (r Request) normalizedPath() string {
	_, _, _, p := r.normalized()
	return p
}

func (c *credential) authorizedFor(req Request) bool {
	for _, d := range c.provider.dests {
		if c.provider.builtin {
			// Built-in bindings are host bindings: any path.
			scheme, host, port, _ := req.normalized()
			if scheme == d.scheme && d.portMatches(port) && d.matchesHost(host) {
				return true
			}
			continue
		}
		if d.matches(req) {
			return true
		}
	}
	return false
}

func containsStr(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// translate returns the rewritten value of one header for one scheme, if the header
// carries this credential's dummy exactly.
func (c *credential) translate(a AuthScheme, v string) (translation, bool) {
	switch a {
	case AuthBearer, AuthToken:
		scheme, tok, ok := strings.Cut(v, " ")
		if !ok || !strings.EqualFold(scheme, string(a)) {
			return translation{}, false
		}
		if strings.TrimSpace(tok) != c.dummy {
			return translation{}, false
		}
		return translation{cred: c, value: scheme + " " + c.real.Reveal()}, true
	case AuthBasic:
		scheme, enc, ok := strings.Cut(v, " ")
		if !ok || !strings.EqualFold(scheme, "basic") {
			return translation{}, false
		}
		raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(enc))
		if err != nil {
			return translation{}, false
		}
		user, pass, ok := strings.Cut(string(raw), ":")
		if !ok {
			return translation{}, false
		}
		t := translation{cred: c, basic: true, user: user, password: pass}
		if user == c.dummy {
			t.user, t.userChanged = c.real.Reveal(), true
		}
		if pass == c.dummy {
			t.password, t.passChanged = c.real.Reveal(), true
		}
		if !t.userChanged && !t.passChanged {
			return translation{}, false
		}
		t.value = scheme + " " + base64.StdEncoding.EncodeToString([]byte(t.user+":"+t.password))
		return t, true
	case AuthHeader:
		rest, ok := strings.CutPrefix(v, c.provider.prefix)
		if !ok || rest != c.dummy {
			return translation{}, false
		}
		return translation{cred: c, value: c.provider.prefix + c.real.Reveal()}, true
	}
	return translation{}, false
}

// resolve picks the one value for a header, merges a basic user from one credential
// with a password from another, or reports ambiguity.
func resolve(ts []translation) (string, bool) {
	first := ts[0]
	same := true
	for _, t := range ts[1:] {
		if t.value != first.value {
			same = false
		}
	}
	if same {
		return first.value, true
	}
	if len(ts) == 2 && ts[0].basic && ts[1].basic {
		a, b := ts[0], ts[1]
		if a.userChanged && !a.passChanged && b.passChanged && !b.userChanged {
			return "Basic " + base64.StdEncoding.EncodeToString([]byte(a.user+":"+b.password)), true
		}
		if b.userChanged && !b.passChanged && a.passChanged && !a.userChanged {
			return "Basic " + base64.StdEncoding.EncodeToString([]byte(b.user+":"+a.password)), true
		}
	}
	return "", false
}

// validHeaderName reports whether s is an RFC 9110 token and not a hop-by-hop or
// framing header.
func validHeaderName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0) {
			return false
		}
	}
	switch canonicalHeader(s) {
	case "Host", "Connection", "Content-Length", "Transfer-Encoding", "Proxy-Authorization",
		"Upgrade", "Te", "Trailer", "Keep-Alive", "Proxy-Connection":
		return false
	}
	return true
}

func canonicalHeader(s string) string { return textproto.CanonicalMIMEHeaderKey(s) }
