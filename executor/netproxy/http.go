package netproxy

// The HTTP listener (spec/network-proxy.md §3, §5.3): absolute-form and origin-form
// requests, and CONNECT.
//
// Protocol flow, per client connection:
//
//	read the request head (line + headers, at most maxHeadBytes, within headTimeout)
//	├─ garbage                → 400, empty body
//	├─ CONNECT host:port      → policy → 403 | "200 OK", dial → close | raw tunnel
//	└─ METHOD target VERSION  → host from the absolute target or Host (400 if neither,
//	                            or if they disagree) → policy → 403 | dial → 502 |
//	                            forward the head in origin form, then splice raw bytes
//
// A forwarded request's head is rewritten by hand, not by httputil.ReverseProxy (which
// adds and rewrites headers): the request line becomes origin-form; hop-by-hop headers
// (Connection and the ones it names, Proxy-Connection, Keep-Alive, Proxy-Authorization,
// Proxy-Authenticate, TE, Upgrade) are dropped and "Connection: close" is added; every
// other header keeps its bytes and order. The body and the response then flow as raw
// bytes, the body bounded by its framing (see requestBody); the connection ends with
// the response (one request per connection). Unlike the reference, the upstream sees
// "Connection: close": without parsing responses, that is what keeps a second request on
// the same connection from bypassing the policy.

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"net"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// requestHead is a parsed request line plus raw header lines.
type requestHead struct {
	method, target, version string
	headers                 []headerLine
}

type headerLine struct{ name, value string }

// get returns the first value of name (case-insensitive) and whether it was present.
func (h *requestHead) get(name string) (string, bool) {
	for _, l := range h.headers {
		if strings.EqualFold(l.name, name) {
			return l.value, true
		}
	}
	return "", false
}

var errBadHead = errors.New("netproxy: malformed request head")

// readHead reads one request head from br, at most maxHeadBytes.
func readHead(br *bufio.Reader) (*requestHead, error) {
	budget := maxHeadBytes
	line, err := readLine(br, &budget)
	if err != nil {
		return nil, err
	}
	parts := strings.Split(line, " ")
	if len(parts) != 3 || parts[0] == "" || parts[1] == "" || !strings.HasPrefix(parts[2], "HTTP/1.") || !isToken(parts[0]) {
		return nil, errBadHead
	}
	h := &requestHead{method: parts[0], target: parts[1], version: parts[2]}
	for {
		l, err := readLine(br, &budget)
		if err != nil {
			return nil, err
		}
		if l == "" {
			return h, nil
		}
		name, value, ok := strings.Cut(l, ":")
		if !ok || name == "" || !isToken(name) {
			return nil, errBadHead
		}
		h.headers = append(h.headers, headerLine{name, strings.Trim(value, " \t")})
	}
}

// readLine reads a CRLF- (or LF-) terminated line, charging it to budget. A line with a
// bare CR or a NUL inside is malformed: forwarded, it could split into two lines upstream.
func readLine(br *bufio.Reader, budget *int) (string, error) {
	var b []byte
	for {
		frag, err := br.ReadSlice('\n')
		*budget -= len(frag)
		if *budget < 0 {
			return "", errBadHead
		}
		b = append(b, frag...)
		if err == nil {
			break
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			return "", err
		}
	}
	b = bytes.TrimSuffix(bytes.TrimSuffix(b, []byte("\n")), []byte("\r"))
	if bytes.IndexByte(b, '\r') >= 0 || bytes.IndexByte(b, 0) >= 0 {
		return "", errBadHead
	}
	return string(b), nil
}

func isToken(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= ' ' || c >= 0x7f || strings.IndexByte("()<>@,;:\\\"/[]?={}", c) >= 0 {
			return false
		}
	}
	return s != ""
}

// serveHTTP serves one client connection of the HTTP listener.
func (p *Proxy) serveHTTP(c net.Conn) {
	_ = c.SetReadDeadline(time.Now().Add(headTimeout))
	br := bufio.NewReaderSize(c, 4096)
	h, err := readHead(br)
	if err != nil {
		if errors.Is(err, errBadHead) {
			writeReply(c, 400, "", "", "", true)
		}
		return
	}
	_ = c.SetReadDeadline(time.Time{})
	wantsClose := false
	if v, ok := h.get("Connection"); ok && strings.EqualFold(strings.TrimSpace(v), "close") {
		wantsClose = true
	}
	if h.method == "CONNECT" {
		p.serveConnect(c, br, h, wantsClose)
		return
	}
	host, port, status := requestTarget(h)
	if status != "" {
		writeReply(c, 400, "text/plain", "", status, wantsClose)
		return
	}
	r := Request{Protocol: ProtocolHTTP, Host: host, Port: port, Method: h.method}
	if d := p.decide(&r, c); !d.Allowed {
		writeBlocked(c, r, d, wantsClose)
		return
	}
	up, err := p.dialAudited(r, c, p.dialUpstream)
	if err != nil {
		replyUpstreamFailure(c, r, err, wantsClose)
		return
	}
	if b := p.broker.Load(); b.HandlesPlainHTTP(host, int(port)) {
		p.rewriteCredentials(b, h, "http", host, port)
	}
	p.forwardRequest(c, up, h, br, "upstream failure", wantsClose)
}

// forwardRequest sends the request h to up, its head and then its body (requestBody, read
// from br), and splices the response back to c. A failed head write answers 502 with
// failText and a body that cannot be framed 400; either closes up.
func (p *Proxy) forwardRequest(c, up net.Conn, h *requestHead, br *bufio.Reader, failText string, wantsClose bool) {
	var head bytes.Buffer
	writeForwardHead(&head, h)
	if _, err := up.Write(head.Bytes()); err != nil {
		up.Close()
		writeReply(c, 502, "text/plain", "", failText, wantsClose)
		return
	}
	body, stop, err := p.requestBody(h, br)
	if err != nil {
		up.Close()
		writeReply(c, 400, "", "", "", true)
		return
	}
	defer stop()
	p.splice(c, up, body, false)
}

// requestBody is the part of the client's stream that belongs to the request h: exactly
// Content-Length bytes, the chunked body re-chunked (trailers dropped), or nothing. What
// follows (a pipelined request) never reaches the upstream, which answers one request and
// closes: each request is checked by the policy on its own connection. The returned stop
// function releases the re-chunking routine; call it once the body is no longer read.
func (p *Proxy) requestBody(h *requestHead, br *bufio.Reader) (io.Reader, func(), error) {
	if !singleFraming(h) {
		return nil, nil, errBadHead
	}
	if te, ok := h.get("Transfer-Encoding"); ok {
		if !strings.EqualFold(strings.TrimSpace(te), "chunked") {
			return nil, nil, errBadHead
		}
		pr, pw := io.Pipe()
		p.wg.Add(1)
		go func() { // ends with the body, or when stop closes pr, or the client conn closes
			defer p.wg.Done()
			cw := httputil.NewChunkedWriter(pw)
			_, err := io.Copy(cw, httputil.NewChunkedReader(br))
			if err == nil {
				err = cw.Close()
			}
			if err == nil {
				_, err = pw.Write([]byte("\r\n"))
			}
			pw.CloseWithError(err)
		}()
		return pr, func() { pr.Close() }, nil
	}
	if cl, ok := h.get("Content-Length"); ok {
		n, err := strconv.ParseInt(strings.TrimSpace(cl), 10, 64)
		if err != nil || n < 0 {
			return nil, nil, errBadHead
		}
		return io.LimitReader(br, n), func() {}, nil
	}
	return strings.NewReader(""), func() {}, nil
}

// singleFraming reports whether h frames its body at most one way: not both
// Transfer-Encoding and Content-Length, and neither header repeated (request smuggling
// through disagreeing framings is refused, RFC 9112 §6.3).
func singleFraming(h *requestHead) bool {
	te, cl := 0, 0
	for _, l := range h.headers {
		switch {
		case strings.EqualFold(l.name, "Transfer-Encoding"):
			te++
		case strings.EqualFold(l.name, "Content-Length"):
			cl++
		}
	}
	return te <= 1 && cl <= 1 && te+cl <= 1
}

// replyUpstreamFailure answers a failed upstream connect: a local-only resolution is a
// not_allowed_local block (§5.2 step 7), anything else 502.
func replyUpstreamFailure(c net.Conn, r Request, err error, wantsClose bool) {
	if errors.Is(err, errLocalResolution) {
		writeBlocked(c, r, localRefusal, wantsClose)
		return
	}
	writeReply(c, 502, "text/plain", "", "upstream failure", wantsClose)
}

// requestTarget finds the destination of a non-CONNECT request: the absolute-form
// target's authority, which must agree with Host when both are present, or the Host
// header of an origin-form request. status is the 400 body when it cannot.
func requestTarget(h *requestHead) (host string, port uint16, status string) {
	hostHdr, hasHost := h.get("Host")
	authority := ""
	defPort := uint16(80)
	if !strings.HasPrefix(h.target, "/") && h.target != "*" {
		u, err := url.Parse(h.target)
		if err != nil || u.Host == "" {
			return "", 0, "missing host"
		}
		if strings.EqualFold(u.Scheme, "https") || strings.EqualFold(u.Scheme, "wss") {
			defPort = 443
		}
		authority = u.Host
		if hasHost && !strings.EqualFold(hostHdr, authority) {
			return "", 0, "Host header does not match request target"
		}
	} else {
		if !hasHost || hostHdr == "" {
			return "", 0, "missing host"
		}
		authority = hostHdr
	}
	host, port, ok := splitAuthority(authority, defPort)
	if !ok {
		return "", 0, "missing host"
	}
	return host, port, ""
}

// splitAuthority splits host[:port] (IPv6 in brackets); the port defaults to def.
func splitAuthority(a string, def uint16) (string, uint16, bool) {
	if a == "" {
		return "", 0, false
	}
	host, portStr, err := net.SplitHostPort(a)
	if err != nil {
		// No port: a bare name, or a bracketed IPv6 literal.
		return strings.TrimSuffix(strings.TrimPrefix(a, "["), "]"), def, true
	}
	n, err := strconv.ParseUint(portStr, 10, 16)
	if err != nil || host == "" {
		return "", 0, false
	}
	return host, uint16(n), true
}

// hopByHop are dropped from a forwarded request head, with the headers Connection names.
var hopByHop = []string{"Connection", "Proxy-Connection", "Keep-Alive", "Proxy-Authorization", "Proxy-Authenticate", "TE", "Upgrade"}

// writeForwardHead writes h in origin form for the upstream server.
func writeForwardHead(b *bytes.Buffer, h *requestHead) {
	target := h.target
	if !strings.HasPrefix(target, "/") && target != "*" {
		if u, err := url.Parse(target); err == nil {
			target = u.RequestURI()
		}
	}
	drop := map[string]bool{}
	for _, n := range hopByHop {
		drop[strings.ToLower(n)] = true
	}
	for _, l := range h.headers {
		if strings.EqualFold(l.name, "Connection") || strings.EqualFold(l.name, "Proxy-Connection") {
			for _, n := range strings.Split(l.value, ",") {
				drop[strings.ToLower(strings.TrimSpace(n))] = true
			}
		}
	}
	b.WriteString(h.method + " " + target + " " + h.version + "\r\n")
	for _, l := range h.headers {
		if drop[strings.ToLower(l.name)] {
			continue
		}
		b.WriteString(l.name + ": " + l.value + "\r\n")
	}
	b.WriteString("Connection: close\r\n\r\n")
}

// serveConnect serves a CONNECT request: a raw tunnel when allowed.
func (p *Proxy) serveConnect(c net.Conn, br *bufio.Reader, h *requestHead, wantsClose bool) {
	host, port, ok := splitAuthority(h.target, 443)
	if !ok || strings.HasPrefix(h.target, "/") {
		writeReply(c, 400, "text/plain", "", "missing host", wantsClose)
		return
	}
	r := Request{Protocol: ProtocolHTTPSConnect, Host: host, Port: port, Method: "CONNECT"}
	if d := p.decide(&r, c); !d.Allowed {
		writeBlocked(c, r, d, wantsClose)
		return
	}
	// The reference answers 200 before it connects upstream (observed: a closed port or
	// a refused address gives "200 OK", then the connection closes).
	if _, err := c.Write([]byte("HTTP/1.1 200 OK\r\ndate: " + httpDate() + "\r\n\r\n")); err != nil {
		return
	}
	if b := p.broker.Load(); p.opts.CA != nil && b.Intercepts(host, int(port)) {
		p.serveIntercepted(c, br, b, r)
		return
	}
	up, err := p.dialAudited(r, c, p.dialUpstream)
	if err != nil {
		return
	}
	p.splice(c, up, br, true)
}
