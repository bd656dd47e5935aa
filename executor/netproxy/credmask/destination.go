package credmask

// Authorized destinations of a credential (§9.3).
//
// Built-in providers bind to hosts: GitHub cloud tokens to github.com, api.github.com
// and *.ghe.com; GitHub Enterprise tokens to the exact GH_HOST (when it is not a cloud
// host); OPENAI_API_KEY to api.openai.com; all over HTTPS port 443.
//
// A custom provider's url_prefixes entry is [scheme://][*.]host[:port][/path]. Without a
// scheme it means https, except a loopback host, which means http (probed: a bare
// "127.0.0.1" is http://127.0.0.1:80). http is accepted only for loopback; other schemes,
// user information, a query or a fragment make the provider invalid. The path is a
// prefix at a segment boundary. A request whose path is unsafe for authorization (a
// backslash, a bad or encoded "%", "/" or "\" escape, or a "." / ".." segment, plain or
// encoded) never matches.

import (
	"errors"
	"net"
	"net/url"
	"strconv"
	"strings"
)

// Request names the destination of one proxied request, as the proxy saw it.
type Request struct {
	// Scheme is "http" or "https" (https for an intercepted CONNECT tunnel).
	Scheme string
	// Host is the request's host name or IP literal, without port or brackets.
	Host string
	// Port is the destination port; 0 means the scheme's default.
	Port int
	// Path is the raw (still escaped) request path, "/" when empty.
	Path string
}

func (r Request) normalized() (scheme, host string, port int, path string) {
	scheme = strings.ToLower(r.Scheme)
	host = normalizeHost(r.Host)
	port = r.Port
	if port == 0 {
		port = defaultPort(scheme)
	}
	path = r.Path
	if path == "" {
		path = "/"
	}
	return
}

func defaultPort(scheme string) int {
	if scheme == "http" {
		return 80
	}
	return 443
}

func normalizeHost(h string) string {
	h = strings.TrimSuffix(strings.ToLower(strings.TrimSpace(h)), ".")
	return strings.TrimSuffix(strings.TrimPrefix(h, "["), "]")
}

// destination is one authorized destination.
type destination struct {
	scheme   string
	host     string // normalized; for a wildcard, the suffix without "*."
	wildcard bool
	port     int
	anyPort  bool   // built-in host bindings ignore the port
	path     string // prefix, starting with "/"
}

// portMatches reports whether port is d's.
func (d destination) portMatches(port int) bool { return d.anyPort || d.port == port }

var errDestination = errors.New("invalid destination")

func parseDestination(v string) (destination, error) {
	v = strings.TrimSpace(v)
	scheme := ""
	rest := v
	if i := strings.Index(v, "://"); i >= 0 {
		scheme, rest = strings.ToLower(v[:i]), v[i+3:]
	}
	wildcard := strings.HasPrefix(rest, "*.")
	if wildcard {
		rest = rest[2:]
	}
	if strings.ContainsAny(rest, "?#@\\") || rest == "" {
		return destination{}, errDestination
	}
	authority, path := rest, "/"
	if i := strings.IndexByte(rest, '/'); i >= 0 {
		authority, path = rest[:i], rest[i:]
	}
	host, portStr := authority, ""
	if h, p, err := net.SplitHostPort(authority); err == nil {
		host, portStr = h, p
	}
	host = normalizeHost(host)
	if host == "" || strings.ContainsAny(host, "*/ %") || !validHost(host) {
		return destination{}, errDestination
	}
	loopback := !wildcard && isLoopbackHost(host)
	switch {
	case scheme == "" && loopback:
		scheme = "http"
	case scheme == "":
		scheme = "https"
	case scheme == "https":
	case scheme == "http" && loopback:
	default:
		return destination{}, errDestination
	}
	port := defaultPort(scheme)
	if portStr != "" {
		p, err := strconv.Atoi(portStr)
		if err != nil || p <= 0 || p > 65535 {
			return destination{}, errDestination
		}
		port = p
	}
	if !pathSafeForAuthorization(path) {
		return destination{}, errDestination
	}
	return destination{scheme: scheme, host: host, wildcard: wildcard, port: port, path: path}, nil
}

func validHost(h string) bool {
	if net.ParseIP(h) != nil {
		return true
	}
	if _, err := url.Parse("https://" + h + "/"); err != nil {
		return false
	}
	for _, c := range h {
		if !(c == '-' || c == '.' || c == '_' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

func isLoopbackHost(h string) bool {
	if h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

func (d destination) matchesHost(host string) bool {
	if d.wildcard {
		return strings.HasSuffix(host, "."+d.host)
	}
	return host == d.host
}

// matches reports whether the request is inside this destination.
func (d destination) matches(r Request) bool {
	scheme, host, port, path := r.normalized()
	if scheme != d.scheme || port != d.port || !d.matchesHost(host) {
		return false
	}
	if !pathSafeForAuthorization(path) {
		return false
	}
	if d.path == "/" || path == d.path {
		return true
	}
	rest, ok := strings.CutPrefix(path, d.path)
	return ok && (strings.HasSuffix(d.path, "/") || strings.HasPrefix(rest, "/"))
}

// pathSafeForAuthorization reports whether the raw path has one interpretation: no
// segment holds a backslash, a malformed escape or an encoded '%', '/' or '\', and no
// segment is "." or ".." (plain or encoded).
func pathSafeForAuthorization(path string) bool {
	if q := strings.IndexByte(path, '?'); q >= 0 {
		path = path[:q]
	}
	for seg := range strings.SplitSeq(path, "/") {
		dots, other := 0, false
		for i := 0; i < len(seg); i++ {
			switch c := seg[i]; c {
			case '.':
				dots++
			case '\\':
				return false
			case '%':
				if i+2 >= len(seg) || !isHex(seg[i+1]) || !isHex(seg[i+2]) {
					return false
				}
				d := unhex(seg[i+1])<<4 | unhex(seg[i+2])
				switch d {
				case '%', '/', '\\':
					return false
				case '.':
					dots++
				default:
					other = true
				}
				i += 2
			default:
				other = true
			}
		}
		if !other && (dots == 1 || dots == 2) {
			return false
		}
	}
	return true
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c >= '0' && c <= '9':
		return c - '0'
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10
	}
	return c - 'A' + 10
}
