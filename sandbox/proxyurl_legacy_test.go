// Code generated for the differential fuzz of issue 27 from the pre-internal/whatwg
// implementation; deleted after the fuzz ran. DO NOT EDIT.

package sandbox

// Proxy variable values (spec/sandbox.md §3.10): which ones name a loopback proxy, on
// which port, and how each is rewritten to point at the in-sandbox bridge.
//
// The reference parses values with a WHATWG URL parser and rewrites host and port in
// the parsed URL (observed from codex 0.169.0). This file implements the subset of that
// parser the observed behaviour depends on:
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
)

// legacyproxyEndpoint is a proxy variable value that names a loopback proxy.
type legacyproxyEndpoint struct {
	// port is the host proxy's port (explicit or default), never 0.
	port uint16
	// prefix and suffix surround "127.0.0.1:<bridge port>" in the rewritten value.
	prefix, suffix string
}

// rewrite returns the value pointing at the bridge on 127.0.0.1:port.
func (e legacyproxyEndpoint) rewrite(port int) string {
	return e.prefix + "127.0.0.1:" + strconv.Itoa(port) + e.suffix
}

var legacyspecialSchemes = map[string]uint16{"http": 80, "https": 443, "ws": 80, "wss": 443, "ftp": 21}

// legacyparseProxyEndpoint reports whether v names a loopback proxy, and how to rewrite it.
func legacyparseProxyEndpoint(v string) (legacyproxyEndpoint, bool) {
	s := legacytrimURL(v)
	if s == "" {
		return legacyproxyEndpoint{}, false
	}
	schemeless := !strings.Contains(s, "://")
	if schemeless {
		s = "http://" + s
	}
	colon := strings.IndexByte(s, ':')
	scheme := strings.ToLower(s[:colon])
	if !legacyvalidScheme(scheme) || scheme == "file" {
		return legacyproxyEndpoint{}, false
	}
	defPort, special := legacyspecialSchemes[scheme]
	rest := s[colon+1:]
	if special {
		rest = strings.TrimLeft(rest, `/\`)
	} else {
		var ok bool
		if rest, ok = strings.CutPrefix(rest, "//"); !ok {
			return legacyproxyEndpoint{}, false
		}
	}
	end := strings.IndexAny(rest, legacyauthorityEnd(special))
	if end < 0 {
		end = len(rest)
	}
	authority, tail := rest[:end], rest[end:]

	var userinfo string
	if at := strings.LastIndexByte(authority, '@'); at >= 0 {
		userinfo, authority = legacyencodeUserinfo(authority[:at]), authority[at+1:]
	}
	host, portText, ok := legacysplitHostPort(authority)
	if !ok || host == "" {
		return legacyproxyEndpoint{}, false
	}
	if !legacyloopbackHost(host, special) {
		return legacyproxyEndpoint{}, false
	}
	port, ok := legacyparsePort(portText)
	switch {
	case !ok:
		return legacyproxyEndpoint{}, false
	case portText != "" && port == 0:
		return legacyproxyEndpoint{}, false // an explicit port 0 names no proxy (observed)
	case special && port == defPort:
		port = 0 // WHATWG drops a special scheme's own default port
	}
	if port == 0 {
		port = legacyfallbackPort(scheme)
	}

	prefix := scheme + "://"
	if userinfo != "" {
		prefix += userinfo + "@"
	}
	suffix := legacyserializeTail(tail, special)
	if !strings.HasSuffix(s, "/") {
		suffix = strings.TrimSuffix(suffix, "/")
	}
	if schemeless {
		prefix = strings.TrimPrefix(prefix, "http://")
	}
	return legacyproxyEndpoint{port: port, prefix: prefix, suffix: suffix}, true
}

// legacytrimURL strips leading/trailing C0 controls and spaces and removes every tab and
// newline, as the WHATWG parser does before parsing.
func legacytrimURL(v string) string {
	v = strings.TrimFunc(v, func(r rune) bool { return r <= ' ' })
	if strings.ContainsAny(v, "\t\n\r") {
		v = strings.NewReplacer("\t", "", "\n", "", "\r", "").Replace(v)
	}
	return v
}

func legacyvalidScheme(s string) bool {
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return false
	}
	for i := 1; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.') {
			return false
		}
	}
	return true
}

func legacyauthorityEnd(special bool) string {
	if special {
		return `/?#\`
	}
	return "/?#"
}

func legacyfallbackPort(scheme string) uint16 {
	switch scheme {
	case "https":
		return defaultPortHTTPS
	case "socks4", "socks4a", "socks5", "socks5h":
		return defaultPortSOCKS
	}
	return defaultPortHTTP
}

// legacysplitHostPort splits at the port colon, keeping a bracketed IPv6 host whole.
func legacysplitHostPort(a string) (host, port string, ok bool) {
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

// legacyparsePort parses a WHATWG port: ASCII digits, at most 65535; "" is absent (0).
func legacyparsePort(p string) (uint16, bool) {
	if p == "" {
		return 0, true
	}
	n := 0
	for i := 0; i < len(p); i++ {
		if p[i] < '0' || p[i] > '9' {
			return 0, false
		}
		n = n*10 + int(p[i]-'0')
		if n > 0xffff {
			return 0, false
		}
	}
	return uint16(n), true
}

// legacyloopbackHost reports whether host is "localhost" or 127.0.0.1. IPv6 literals never
// are (observed: the reference does not route http://[::1]:port).
func legacyloopbackHost(host string, special bool) bool {
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
	ip, ok := legacyparseIPv4(lower)
	return ok && ip == 0x7f000001
}

// legacyparseIPv4 is the WHATWG IPv4 parser: 1–4 dot-separated numbers (decimal, 0x hex, or
// 0-prefixed octal; one trailing dot allowed), the last filling the remaining bytes.
func legacyparseIPv4(h string) (uint32, bool) {
	parts := strings.Split(h, ".")
	if len(parts) > 1 && parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1]
	}
	if len(parts) == 0 || len(parts) > 4 {
		return 0, false
	}
	var nums []uint64
	for _, p := range parts {
		n, ok := legacyparseIPv4Number(p)
		if !ok {
			return 0, false
		}
		nums = append(nums, n)
	}
	last := len(nums) - 1
	var ip uint64
	for i, n := range nums[:last] {
		if n > 255 {
			return 0, false
		}
		ip |= n << (8 * (3 - i))
	}
	if nums[last] >= 1<<(8*(4-last)) {
		return 0, false
	}
	return uint32(ip + nums[last]), true
}

func legacyparseIPv4Number(p string) (uint64, bool) {
	if p == "" {
		return 0, false
	}
	base := 10
	switch {
	case len(p) >= 2 && (p[:2] == "0x" || p[:2] == "0X"):
		base, p = 16, p[2:]
	case len(p) >= 2 && p[0] == '0':
		base, p = 8, p[1:]
	}
	if p == "" {
		return 0, true
	}
	n, err := strconv.ParseUint(p, base, 32)
	return n, err == nil
}

// Percent-encode sets (WHATWG URL §1.3), as predicates over one byte.
func legacyinC0Set(c byte) bool { return c < 0x20 || c > 0x7e }
func legacyinFragmentSet(c byte) bool {
	return legacyinC0Set(c) || c == ' ' || c == '"' || c == '<' || c == '>' || c == '`'
}
func legacyinQuerySet(c byte) bool {
	return legacyinC0Set(c) || c == ' ' || c == '"' || c == '#' || c == '<' || c == '>'
}
func legacyinPathSet(c byte) bool {
	return legacyinQuerySet(c) || c == '?' || c == '`' || c == '{' || c == '}'
}
func legacyinUserinfoSet(c byte) bool {
	return legacyinPathSet(c) || c == '/' || c == ':' || c == ';' || c == '=' || c == '@' ||
		c >= '[' && c <= '^' || c == '|'
}

func legacypercentEncode(s string, in func(byte) bool) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if in(c) {
			b.WriteString("%" + strings.ToUpper(strconv.FormatUint(uint64(c)|0x100, 16)[1:]))
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

// legacyencodeUserinfo re-encodes "user[:password]" as the WHATWG serializer does.
func legacyencodeUserinfo(u string) string {
	user, pass, hasPass := strings.Cut(u, ":")
	out := legacypercentEncode(user, legacyinUserinfoSet)
	if hasPass && pass != "" {
		out += ":" + legacypercentEncode(pass, legacyinUserinfoSet)
	}
	return out
}

// legacyserializeTail serializes the path, query and fragment that follow the authority.
func legacyserializeTail(t string, special bool) string {
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
	out := legacyserializePath(path, special)
	if hasQuery {
		set := legacyinQuerySet
		if special {
			set = func(c byte) bool { return legacyinQuerySet(c) || c == '\'' }
		}
		out += "?" + legacypercentEncode(query, set)
	}
	if hasFrag {
		out += "#" + legacypercentEncode(frag, legacyinFragmentSet)
	}
	return out
}

// legacyserializePath normalizes dot segments (and, for special schemes, '\' separators and
// the empty path, which becomes "/").
func legacyserializePath(p string, special bool) string {
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
		switch strings.ToLower(s) {
		case ".", "%2e":
			if last {
				out = append(out, "")
			}
		case "..", ".%2e", "%2e.", "%2e%2e":
			if len(out) > 0 {
				out = out[:len(out)-1]
			}
			if last {
				out = append(out, "")
			}
		default:
			out = append(out, legacypercentEncode(s, legacyinPathSet))
		}
	}
	return "/" + strings.Join(out, "/")
}
