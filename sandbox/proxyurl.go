package sandbox

// Proxy variable values (spec/sandbox.md §3.10): which ones name a loopback proxy, on
// which port, and how each is rewritten to point at the in-sandbox bridge.
//
// The reference parses values with a WHATWG URL parser and rewrites host and port in
// the parsed URL (observed from codex 0.169.0). This file implements, on internal/whatwg's
// pieces, the subset of that parser the observed behaviour depends on:
//
//	value      := [scheme "://"] [userinfo "@"] host [":" port] [path] ["?" query] ["#" fragment]
//	no "://"   => parsed as "http://" + value and rewritten without the "http://" again
//	scheme     lower-cased; special schemes (http https ws wss ftp) skip extra slashes,
//	           treat '\' as '/', drop their own default port, normalize dot segments
//	host       "localhost" (ASCII case-insensitive) or an IPv4 address equal to
//	           127.0.0.1 in any WHATWG form (127.1, 0x7f.0.0.1); [::1] is NOT loopback
//	           (observed); anything else is left untouched
//	port       explicit (1–65535; 0 makes the value unusable) or the default: https 443,
//	           socks4/socks4a/socks5/socks5h 1080, every other scheme 80 (observed)
//	rewrite    <scheme>://[userinfo@]127.0.0.1:<port><path>[?query][#fragment], one
//	           trailing "/" dropped unless the value ended with "/" (observed)
//
// Known gaps against a full WHATWG parser (all fail towards "not a loopback endpoint",
// i.e. the value is left untouched and never routed): IDNA host processing, and
// percent-encoded hosts of special schemes.

import (
	"strconv"
	"strings"

	"github.com/execlab/executor/internal/whatwg"
)

// proxyEndpoint is a proxy variable value that names a loopback proxy.
type proxyEndpoint struct {
	// port is the host proxy's port (explicit or default), never 0.
	port uint16
	// prefix and suffix surround "127.0.0.1:<bridge port>" in the rewritten value.
	prefix, suffix string
}

// isSOCKS5 reports whether the endpoint is a socks5:// or socks5h:// proxy.
func (e proxyEndpoint) isSOCKS5() bool {
	return strings.HasPrefix(e.prefix, "socks5://") || strings.HasPrefix(e.prefix, "socks5h://")
}

// rewrite returns the value pointing at the bridge on 127.0.0.1:port.
func (e proxyEndpoint) rewrite(port int) string {
	return e.prefix + "127.0.0.1:" + strconv.Itoa(port) + e.suffix
}

// parseProxyEndpoint reports whether v names a loopback proxy, and how to rewrite it.
func parseProxyEndpoint(v string) (proxyEndpoint, bool) {
	s := whatwg.Trim(v)
	if s == "" {
		return proxyEndpoint{}, false
	}
	schemeless := !strings.Contains(s, "://")
	if schemeless {
		s = "http://" + s
	}
	scheme, rest, ok := whatwg.SplitScheme(s)
	scheme = strings.ToLower(scheme)
	if !ok || scheme == "file" {
		return proxyEndpoint{}, false
	}
	defPort, special := whatwg.SpecialSchemes[scheme]
	if special {
		rest = strings.TrimLeft(rest, `/\`)
	} else {
		if rest, ok = strings.CutPrefix(rest, "//"); !ok {
			return proxyEndpoint{}, false
		}
	}
	end := strings.IndexAny(rest, authorityEnd(special))
	if end < 0 {
		end = len(rest)
	}
	authority, tail := rest[:end], rest[end:]

	var userinfo string
	if at := strings.LastIndexByte(authority, '@'); at >= 0 {
		userinfo, authority = encodeUserinfo(authority[:at]), authority[at+1:]
	}
	host, portText, ok := splitHostPort(authority)
	if !ok || host == "" {
		return proxyEndpoint{}, false
	}
	if !loopbackHost(host, special) {
		return proxyEndpoint{}, false
	}
	port, ok := whatwg.ParsePort(portText)
	switch {
	case !ok:
		return proxyEndpoint{}, false
	case portText != "" && port == 0:
		return proxyEndpoint{}, false // an explicit port 0 names no proxy (observed)
	case special && port == defPort:
		port = 0 // WHATWG drops a special scheme's own default port
	}
	if port == 0 {
		port = fallbackPort(scheme)
	}

	prefix := scheme + "://"
	if userinfo != "" {
		prefix += userinfo + "@"
	}
	suffix := serializeTail(tail, special)
	if !strings.HasSuffix(s, "/") {
		suffix = strings.TrimSuffix(suffix, "/")
	}
	if schemeless {
		prefix = strings.TrimPrefix(prefix, "http://")
	}
	return proxyEndpoint{port: port, prefix: prefix, suffix: suffix}, true
}

func authorityEnd(special bool) string {
	if special {
		return `/?#\`
	}
	return "/?#"
}

func fallbackPort(scheme string) uint16 {
	switch scheme {
	case "https":
		return defaultPortHTTPS
	case "socks4", "socks4a", "socks5", "socks5h":
		return defaultPortSOCKS
	}
	return defaultPortHTTP
}

// splitHostPort splits at the port colon, keeping a bracketed IPv6 host whole.
func splitHostPort(a string) (host, port string, ok bool) {
	if strings.HasPrefix(a, "[") {
		end := strings.IndexByte(a, ']')
		if end < 0 {
			return "", "", false
		}
		host, a = a[:end+1], a[end+1:]
		if a == "" {
			return host, "", true
		}
		if a[0] != ':' {
			return "", "", false
		}
		return host, a[1:], true
	}
	host, port, _ = strings.Cut(a, ":")
	return host, port, true
}

// loopbackHost reports whether host is "localhost" or 127.0.0.1. IPv6 literals never
// are (observed: the reference does not route http://[::1]:port).
func loopbackHost(host string, special bool) bool {
	if strings.HasPrefix(host, "[") || strings.ContainsAny(host, " #%/:<>?@[\\]^|\x7f") {
		return false
	}
	for i := 0; i < len(host); i++ {
		if host[i] < ' ' || host[i] >= 0x80 {
			return false
		}
	}
	lower := strings.ToLower(host)
	if lower == "localhost" {
		return true
	}
	if !special {
		return host == "127.0.0.1"
	}
	ip, ok := whatwg.ParseIPv4(lower)
	return ok && ip == 0x7f000001
}

// encodeUserinfo re-encodes "user[:password]" as the WHATWG serializer does.
func encodeUserinfo(u string) string {
	user, pass, hasPass := strings.Cut(u, ":")
	out := whatwg.PercentEncode(user, whatwg.InUserinfoSet)
	if hasPass && pass != "" {
		out += ":" + whatwg.PercentEncode(pass, whatwg.InUserinfoSet)
	}
	return out
}

// serializeTail serializes the path, query and fragment that follow the authority.
func serializeTail(t string, special bool) string {
	path, rest := t, ""
	if i := strings.IndexAny(t, "?#"); i >= 0 {
		path, rest = t[:i], t[i:]
	}
	var query, frag string
	hasQuery, hasFrag := false, false
	if strings.HasPrefix(rest, "?") {
		hasQuery = true
		query, frag, hasFrag = strings.Cut(rest[1:], "#")
	} else if strings.HasPrefix(rest, "#") {
		frag, hasFrag = rest[1:], true
	}
	out := serializePath(path, special)
	if hasQuery {
		set := whatwg.InQuerySet
		if special {
			set = whatwg.InSpecialQuerySet
		}
		out += "?" + whatwg.PercentEncode(query, set)
	}
	if hasFrag {
		out += "#" + whatwg.PercentEncode(frag, whatwg.InFragmentSet)
	}
	return out
}

// serializePath normalizes dot segments (and, for special schemes, '\' separators and
// the empty path, which becomes "/").
func serializePath(p string, special bool) string {
	if special {
		p = strings.ReplaceAll(p, `\`, "/")
	}
	if p == "" {
		if special {
			return "/"
		}
		return ""
	}
	segs := strings.Split(p[1:], "/")
	var out []string
	for i, s := range segs {
		last := i == len(segs)-1
		switch {
		case whatwg.IsSingleDotSegment(s):
			if last {
				out = append(out, "")
			}
		case whatwg.IsDoubleDotSegment(s):
			if len(out) > 0 {
				out = out[:len(out)-1]
			}
			if last {
				out = append(out, "")
			}
		default:
			out = append(out, whatwg.PercentEncode(s, whatwg.InPathSet))
		}
	}
	return "/" + strings.Join(out, "/")
}
