package netproxy

// Credential masking in the forwarder (spec/network-proxy.md §9.3): with a broker (the
// child's environment was masked by credmask.Prepare), a plain-HTTP request bound to a
// credential's http destination, and every request inside a CONNECT tunnel to one of its
// https destinations, has the dummy in its credential header swapped back for the real
// value before it is forwarded.
//
// Protocol flow of an intercepted tunnel (Broker.Intercepts(host, port)):
//
//	"200 OK" to the CONNECT → TLS server handshake with the CA's leaf for the CONNECT
//	host (HTTP/1.1 only) → one request head (origin form) → header rewrite → dial the
//	CONNECT target, TLS client handshake verified against UpstreamRoots (nil: system
//	roots) for that host → forward the head ("Connection: close") and the body → relay
//	the response bytes → close both.
//
// Every other tunnel stays opaque (the child's TLS goes to the destination untouched),
// so the dummy, never the real value, reaches any host the credential is not bound to.
// One request per tunnel, as for plain HTTP: a client that wants another request opens
// another tunnel. Header values are never logged.

import (
	"bufio"
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/url"
	"strings"
	"time"

	"github.com/execlab/executor/executor/netproxy/credmask"
)

// mitmUpstreamError is the body of the 502 an intercepted request gets when its
// upstream cannot be reached or verified (probed on 0.171.0, which sends no
// "connection: close" with it; a plain request's 502 says "upstream failure"). The
// tunnel is closed after it all the same.
const mitmUpstreamError = "mitm upstream error"

// rewriteCredentials swaps the dummies of h's credential headers for real values when
// b authorizes the destination (scheme, host, port, the request path). It reports
// nothing; names of rewritten headers go to the debug log, values never.
func (p *Proxy) rewriteCredentials(b *credmask.Broker, h *requestHead, scheme, host string, port uint16) {
	path := h.target
	if !strings.HasPrefix(path, "/") {
		if u, err := url.Parse(path); err == nil {
			path = u.RequestURI()
		}
	}
	lines := make([]credmask.HeaderLine, len(h.headers))
	for i, l := range h.headers {
		lines[i] = credmask.HeaderLine{Name: l.name, Value: l.value}
	}
	lines, res := b.RewriteLines(credmask.Request{Scheme: scheme, Host: NormalizeHost(host), Port: int(port), Path: path}, lines)
	if len(res.Rewritten) == 0 && len(res.Ambiguous) == 0 {
		return
	}
	h.headers = h.headers[:len(lines)]
	for i, l := range lines {
		h.headers[i] = headerLine{name: l.Name, value: l.Value}
	}
	p.log.Debug("credential headers translated", "host", host, "port", port, "rewritten", res.Rewritten, "ambiguous", res.Ambiguous)
}

// prefixConn is a net.Conn whose first bytes come from r (what the head reader
// buffered past the CONNECT head).
type prefixConn struct {
	net.Conn
	r io.Reader
}

func (c *prefixConn) Read(b []byte) (int, error) { return c.r.Read(b) }

// serveIntercepted serves an intercepted tunnel to host:port on c, after the CONNECT's
// "200 OK" was written; r is the CONNECT request, already allowed and audited.
func (p *Proxy) serveIntercepted(c net.Conn, br *bufio.Reader, b *credmask.Broker, r Request) {
	cfg, err := p.opts.CA.ServerTLSConfig(r.Host)
	if err != nil {
		p.log.Debug("intercepted tunnel: no leaf certificate", "host", r.Host, "error", err)
		return
	}
	tc := tls.Server(&prefixConn{Conn: c, r: br}, cfg)
	defer tc.Close()
	_ = c.SetDeadline(time.Now().Add(headTimeout))
	if err := tc.HandshakeContext(p.ctx); err != nil {
		p.log.Debug("intercepted tunnel: client handshake failed", "host", r.Host, "error", err)
		return
	}
	tbr := bufio.NewReaderSize(tc, 4096)
	h, err := readHead(tbr)
	if err != nil {
		if err == errBadHead {
			writeReply(tc, 400, "", "", "", true)
		}
		return
	}
	_ = c.SetDeadline(time.Time{})
	if h.method == "CONNECT" {
		writeReply(tc, 400, "", "", "", true)
		return
	}
	p.rewriteCredentials(b, h, "https", r.Host, r.Port)
	raw, err := p.dialUpstream(context.Background(), r)
	if err != nil {
		p.log.Debug("upstream connect failed", "host", r.Host, "port", r.Port, "error", err)
		writeReply(tc, 502, "text/plain", "", mitmUpstreamError, false)
		return
	}
	up := tls.Client(raw, credmask.UpstreamTLSConfig(r.Host, p.opts.UpstreamRoots))
	hctx, cancel := context.WithTimeout(p.ctx, upstreamDialTimeout)
	err = up.HandshakeContext(hctx)
	cancel()
	if err != nil {
		raw.Close()
		p.log.Debug("intercepted tunnel: upstream handshake failed", "host", r.Host, "error", err)
		writeReply(tc, 502, "text/plain", "", mitmUpstreamError, false)
		return
	}
	p.forwardRequest(tc, up, h, tbr, mitmUpstreamError, false)
}
