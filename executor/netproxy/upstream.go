package netproxy

// The mandatory TCP upstream (codex 0.171.0 `--tcp-upstream-proxy HOST:PORT`; probed on
// the 0.171.0 binary with a recording upstream, see docs/protocol-extensions.md is not
// involved: this is the reference's behaviour). With it, every allowed SOCKS5 TCP
// connection goes through the upstream as an HTTP CONNECT; the HTTP listener (plain and
// CONNECT) still dials directly. In the order the reference applies them, each a SOCKS5
// "connection refused" reply (5):
//
//  1. allowLocalBinding false: the local-resolution check of §5.2 step 7 first, in
//     Proxy.decide (a name resolving only to local addresses, or not at all, is "not
//     allowed" (2) with its not_allowed_local audit, as without an upstream); then
//     allowUpstreamProxy false →
//     "upstream proxies are disabled by network policy", else "destination requires
//     local address enforcement" (the upstream resolves names itself, so the proxy
//     cannot keep them off private addresses).
//  2. allowUpstreamProxy false → "upstream proxies are disabled by network policy".
//  3. an IP-literal destination → "IP destination cannot use the TCP upstream proxy".
//  4. otherwise `CONNECT host:port HTTP/1.1` with a lower-case `host` header; a status
//     other than 2xx → "TCP upstream refused CONNECT (<status>)".

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"time"
)

// errTCPUpstream wraps every refusal of the TCP upstream path; SOCKS5 answers it 5.
var errTCPUpstream = errors.New("netproxy: TCP upstream")

// maxUpstreamHeadBytes bounds the upstream's CONNECT response head.
const maxUpstreamHeadBytes = 16 << 10

// dialSOCKS connects an allowed SOCKS5 TCP request: directly, or through the TCP upstream.
func (p *Proxy) dialSOCKS(ctx context.Context, r Request) (net.Conn, error) {
	if p.opts.TCPUpstream == "" {
		return p.dialUpstream(ctx, r)
	}
	ctx, cancel := context.WithTimeout(ctx, upstreamDialTimeout)
	defer cancel()
	port := r.Port
	switch h := NormalizeHost(r.Host); {
	case !p.pol.AllowUpstream:
		return nil, fmt.Errorf("%w: upstream proxies are disabled by network policy", errTCPUpstream)
	case !p.pol.AllowLocalBinding:
		return nil, fmt.Errorf("%w: destination requires local address enforcement", errTCPUpstream)
	case isIPLiteral(h):
		return nil, fmt.Errorf("%w: IP destination cannot use the TCP upstream proxy", errTCPUpstream)
	default:
		return p.connectVia(ctx, net.JoinHostPort(h, strconv.Itoa(int(port))))
	}
}

func isIPLiteral(h string) bool {
	_, err := netip.ParseAddr(h)
	return err == nil
}

// connectVia opens a CONNECT tunnel to target through the TCP upstream.
func (p *Proxy) connectVia(ctx context.Context, target string) (net.Conn, error) {
	c, err := p.dialer()(ctx, "tcp", p.opts.TCPUpstream)
	if err != nil {
		return nil, fmt.Errorf("%w: connecting to the upstream: %w", errTCPUpstream, err)
	}
	if dl, ok := ctx.Deadline(); ok {
		_ = c.SetDeadline(dl)
	}
	if _, err := fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nhost: %s\r\n\r\n", target, target); err != nil {
		c.Close()
		return nil, fmt.Errorf("%w: writing CONNECT: %w", errTCPUpstream, err)
	}
	br := bufio.NewReaderSize(&limitedConn{c: c, left: maxUpstreamHeadBytes}, 512)
	resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("%w: reading the CONNECT response: %w", errTCPUpstream, err)
	}
	if resp.StatusCode/100 != 2 {
		c.Close()
		return nil, fmt.Errorf("%w: TCP upstream refused CONNECT (%s)", errTCPUpstream, resp.Status)
	}
	_ = c.SetDeadline(time.Time{})
	if n := br.Buffered(); n > 0 { // the upstream's first bytes arrived with its head
		early, _ := br.Peek(n)
		return &prefixedConn{Conn: c, prefix: append([]byte(nil), early...)}, nil
	}
	return c, nil
}

// limitedConn reads at most left bytes from c (the response head's bound).
type limitedConn struct {
	c    net.Conn
	left int
}

func (l *limitedConn) Read(b []byte) (int, error) {
	if l.left <= 0 {
		return 0, errors.New("CONNECT response head too long")
	}
	if len(b) > l.left {
		b = b[:l.left]
	}
	n, err := l.c.Read(b)
	l.left -= n
	return n, err
}

// prefixedConn returns prefix before reading from Conn.
type prefixedConn struct {
	net.Conn
	prefix []byte
}

func (c *prefixedConn) Read(b []byte) (int, error) {
	if len(c.prefix) > 0 {
		n := copy(b, c.prefix)
		c.prefix = c.prefix[n:]
		return n, nil
	}
	return c.Conn.Read(b)
}

// CloseWrite half-closes the upstream side when it can.
func (c *prefixedConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}
