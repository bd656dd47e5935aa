package netproxy

// One proxy instance per process/start (spec/network-proxy.md §3): an HTTP listener and,
// with enableSocks5, a SOCKS5 listener, each on 127.0.0.1:<ephemeral>.
//
// Goroutines: one accept routine per listener, one routine per client connection, and
// one extra copy routine per established tunnel. All are counted in Proxy.wg; Close
// closes the listeners and every tracked connection, then waits for them.

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/execlab/executor/executor/netproxy/credmask"
)

// AuditRecord is one policy decision, for network/policyDecision (§7).
type AuditRecord struct {
	Time     time.Time
	Request  Request
	Decision Decision
	// Client is the child's address, host:port.
	Client string
}

// Options configures a proxy. The zero value (or nil) is valid.
type Options struct {
	// Log receives debug lines; nil discards them.
	Log *slog.Logger
	// Audit, when set, receives every final decision. It is called on the connection's
	// routine and must not block (best effort: drop rather than wait).
	Audit func(AuditRecord)
	// Dial connects upstream; nil uses a net.Dialer. Tests inject failures here.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// Resolve looks a host name up; nil uses net.DefaultResolver.
	Resolve func(ctx context.Context, host string) ([]netip.Addr, error)
	// Decider puts not_allowed requests to the client (network/policyRequest, §6) when
	// the policy has a CallbackTimeout; nil (or no timeout) denies them outright. It is
	// called on the connection's routine with a ctx bounded by the timeout plus 5 s and
	// cancelled by Close.
	Decider Decider
	// CA terminates the intercepted CONNECT tunnels of credential masking (§9.3); nil:
	// no tunnel is intercepted, so SetBroker must not be given a broker.
	CA *credmask.CA
	// UpstreamRoots verifies the upstream of an intercepted tunnel; nil: system roots.
	// Tests set it.
	UpstreamRoots *x509.CertPool
	// TCPUpstream is the executor's `--tcp-upstream-proxy HOST:PORT` (codex 0.171.0):
	// SOCKS5 TCP connections go through it as HTTP CONNECT (upstream.go); "" dials
	// directly.
	TCPUpstream string
}

// Proxy is a running proxy. Its methods are safe for concurrent use.
type Proxy struct {
	pol   *Policy
	opts  Options
	log   *slog.Logger
	httpL net.Listener
	sockL net.Listener // nil without SOCKS5

	// ctx is cancelled by Close: it ends pending decider calls (they resolve as deny).
	ctx    context.Context
	cancel context.CancelFunc

	// broker swaps dummies back for authorized destinations (credential masking, §9.3);
	// nil when nothing was masked. Set once by SetBroker before the child runs.
	broker atomic.Pointer[credmask.Broker]

	wg sync.WaitGroup
	// mu guards conns and closed: the connection table Close empties.
	mu     sync.Mutex
	conns  map[net.Conn]struct{}
	closed bool
}

// Start binds the listeners of a proxy enforcing pol and starts serving them. The proxy
// runs until Close; the caller owns it.
func Start(pol *Policy, o *Options) (*Proxy, error) {
	p := &Proxy{pol: pol, conns: map[net.Conn]struct{}{}}
	if o != nil {
		p.opts = *o
	}
	p.log = p.opts.Log
	if p.log == nil {
		p.log = slog.New(slog.DiscardHandler)
	}
	p.log = p.log.With("component", "netproxy")
	p.ctx, p.cancel = context.WithCancel(context.Background())
	var err error
	if p.httpL, err = net.Listen("tcp4", "127.0.0.1:0"); err != nil {
		p.cancel()
		return nil, fmt.Errorf("binding the HTTP proxy listener: %w", err)
	}
	if pol.EnableSocks5 {
		if p.sockL, err = net.Listen("tcp4", "127.0.0.1:0"); err != nil {
			p.httpL.Close()
			p.cancel()
			return nil, fmt.Errorf("binding the SOCKS5 proxy listener: %w", err)
		}
	}
	p.log.Debug("HTTP proxy listening", "addr", p.httpL.Addr().String())
	p.wg.Add(1)
	go p.routineAccept(p.httpL, p.serveHTTP)
	if p.sockL != nil {
		p.log.Debug("SOCKS5 proxy listening", "addr", p.sockL.Addr().String())
		p.wg.Add(1)
		go p.routineAccept(p.sockL, p.serveSOCKS5)
	}
	return p, nil
}

// SetBroker installs the credential broker of the child's masked environment
// (credmask.Prepare runs on the environment that holds this proxy's variables, so the
// broker exists only after Start). Call it before the child is spawned.
func (p *Proxy) SetBroker(b *credmask.Broker) { p.broker.Store(b) }

// HTTPAddr is the HTTP listener's address, host:port.
func (p *Proxy) HTTPAddr() string { return p.httpL.Addr().String() }

// SOCKSAddr is the SOCKS5 listener's address, or "" when SOCKS5 is off.
func (p *Proxy) SOCKSAddr() string {
	if p.sockL == nil {
		return ""
	}
	return p.sockL.Addr().String()
}

// Env is the child's proxy environment (§4).
func (p *Proxy) Env() []EnvVar { return Env(p.HTTPAddr(), p.SOCKSAddr(), p.pol.AllowLocalBinding) }

// Close stops the listeners, closes every connection and waits for every routine.
// Afterwards a connect to either address is refused. Idempotent.
func (p *Proxy) Close() {
	p.mu.Lock()
	already := p.closed
	p.closed = true
	conns := p.conns
	p.conns = nil
	p.mu.Unlock()
	if !already {
		p.cancel()
		p.httpL.Close()
		if p.sockL != nil {
			p.sockL.Close()
		}
		for c := range conns {
			c.Close()
		}
	}
	p.wg.Wait()
}

// track adds c to the connection table; false (and c closed) after Close began or at
// the maxTrackedConns bound.
func (p *Proxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed || len(p.conns) >= maxTrackedConns {
		c.Close()
		return false
	}
	p.conns[c] = struct{}{}
	return true
}

func (p *Proxy) untrack(c net.Conn) {
	p.mu.Lock()
	delete(p.conns, c)
	p.mu.Unlock()
	c.Close()
}

// routineAccept serves one listener until it is closed.
func (p *Proxy) routineAccept(l net.Listener, serve func(net.Conn)) {
	defer p.wg.Done()
	for {
		c, err := l.Accept()
		if err != nil {
			if !errors.Is(err, net.ErrClosed) {
				p.log.Debug("accept failed; listener stopped", "error", err)
			}
			return
		}
		if !p.track(c) {
			continue
		}
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			defer p.untrack(c)
			serve(c)
		}()
	}
}

// decide runs the policy for r, the decider for an askable refusal when callbacks are
// enabled, and, without local binding, the resolution check of an allowed name (§5.2
// step 7: a name that resolves only to local or private addresses, or not at all, is a
// not_allowed_local refusal, audited alone, as 0.171.0 does; the addresses are kept in r
// for the dial). It reports the final decision to the audit hook (§7).
func (p *Proxy) decide(r *Request, client net.Conn) Decision {
	d := p.pol.Decide(*r)
	if d.Askable && p.pol.CallbackTimeout > 0 && p.opts.Decider != nil {
		d = p.askDecider(p.ctx, *r)
	}
	if d.Allowed && !p.pol.AllowLocalBinding && !isIPLiteral(NormalizeHost(r.Host)) {
		ctx, cancel := context.WithTimeout(p.ctx, upstreamDialTimeout)
		_, addrs, err := p.resolveAllowed(ctx, r.Host)
		cancel()
		switch {
		case errors.Is(err, errLocalResolution):
			d = localRefusal
		case err != nil:
			r.resolveErr = err
		default:
			r.addrs = addrs
		}
	}
	p.audit(*r, d, client)
	return d
}

func (p *Proxy) audit(r Request, d Decision, client net.Conn) {
	if p.opts.Audit != nil {
		p.opts.Audit(AuditRecord{Time: time.Now(), Request: r, Decision: d, Client: client.RemoteAddr().String()})
	}
}

// errLocalResolution is the resolution check's refusal (§5.2 step 7): answered as a
// not_allowed_local block.
var errLocalResolution = errors.New("netproxy: host resolves only to local or private addresses, or not at all")

// errResolution: with local binding allowed, a name that does not resolve is an
// upstream failure (HTTP 502, SOCKS5 reply 5, CONNECT 200 then closed), as 0.171.0
// answers it; without local binding the resolution check refuses it first.
var errResolution = errors.New("netproxy: host does not resolve")

// errUpstreamBlocked: every resolved address is denied or review-listed; answered as an
// upstream failure (502), as the reference does.
var errUpstreamBlocked = errors.New("netproxy: every resolved address is denied by the policy")

// localRefusal is the baseline policy's decision on a destination that resolves only to
// local or private addresses (errLocalResolution).
var localRefusal = Decision{Reason: ReasonNotAllowedLocal, Source: SourceBaselinePolicy}

// dialAudited connects to the destination of an allowed request r from client c with
// dial (dialUpstream, or dialSOCKS for SOCKS5). A failure is logged, and a local refusal
// is audited as localRefusal; the caller replies.
func (p *Proxy) dialAudited(r Request, c net.Conn, dial func(ctx context.Context, r Request) (net.Conn, error)) (net.Conn, error) {
	up, err := dial(context.Background(), r)
	if err != nil {
		p.log.Debug("upstream connect failed", "host", r.Host, "port", r.Port, "error", err)
		if errors.Is(err, errLocalResolution) {
			p.audit(r, localRefusal, c)
		}
	}
	return up, err
}

// dialUpstream connects to an allowed destination. A host name is resolved first; a name
// that does not resolve, or (unless local binding is allowed or the name itself was
// allowlisted as a local host) whose every address is local or private, is refused with
// errLocalResolution (§5.2 step 7: allowed names must not reach the local network
// through DNS); addresses on the deny or review lists are skipped, errUpstreamBlocked
// when none is left.
func (p *Proxy) dialUpstream(ctx context.Context, r Request) (net.Conn, error) {
	ctx, cancel := context.WithTimeout(ctx, upstreamDialTimeout)
	defer cancel()
	if r.resolveErr != nil {
		return nil, r.resolveErr
	}
	h, addrs := NormalizeHost(r.Host), r.addrs
	if addrs == nil { // not checked by decide: an IP literal, or local binding allowed
		var err error
		if h, addrs, err = p.resolveAllowed(ctx, r.Host); err != nil {
			return nil, err
		}
	}
	port := r.Port
	dial := p.dialer()
	var lastErr error = errors.New("no addresses")
	for _, a := range addrs {
		c, err := dial(ctx, "tcp", net.JoinHostPort(a.Unmap().String(), strconv.Itoa(int(port))))
		if err == nil {
			return c, nil
		}
		lastErr = err
	}
	return nil, fmt.Errorf("connecting to %s: %w", h, lastErr)
}

// dialer is Options.Dial, or a net.Dialer's.
func (p *Proxy) dialer() func(ctx context.Context, network, addr string) (net.Conn, error) {
	if p.opts.Dial != nil {
		return p.opts.Dial
	}
	var d net.Dialer
	return d.DialContext
}

// resolveAllowed returns host normalised and the addresses a connection to it may use.
// A host name is resolved first; a name that does not resolve, or (unless local binding
// is allowed or the name itself was allowlisted as a local host) whose every address is
// local or private, is refused with errLocalResolution (§5.2 step 7: allowed names must
// not reach the local network through DNS); addresses on the deny or review lists are
// skipped, errUpstreamBlocked when none is left. An IP literal is returned as it is.
func (p *Proxy) resolveAllowed(ctx context.Context, host string) (string, []netip.Addr, error) {
	h := NormalizeHost(host)
	if a, err := netip.ParseAddr(h); err == nil {
		return h, []netip.Addr{a}, nil
	}
	resolve := p.opts.Resolve
	if resolve == nil {
		resolve = defaultResolve
	}
	addrs, err := resolve(ctx, h)
	if err != nil {
		p.log.Debug("resolution failed", "host", h, "error", err)
		if p.pol.AllowLocalBinding {
			return h, nil, fmt.Errorf("%w: %s", errResolution, h)
		}
		// Without local binding a name that does not resolve is refused like a local
		// one (observed: an immediate 403 not_allowed_local, the only audit record).
		return h, nil, errLocalResolution
	}
	if !p.pol.AllowLocalBinding && !(p.pol.allowedExact[h] && IsLocalHost(h)) {
		public := addrs[:0:0]
		for _, a := range addrs {
			if !IsLocalAddr(a) {
				public = append(public, a)
			}
		}
		if len(public) == 0 {
			return h, nil, errLocalResolution
		}
		addrs = public
	}
	// The resolved addresses go through the deny and review lists too (observed:
	// an allowlisted localhost with 127.0.0.1 denied or review-listed → 502).
	permitted := addrs[:0:0]
	for _, a := range addrs {
		s := a.Unmap().String()
		if !p.pol.deny.match(s) && !p.pol.review.match(s) {
			permitted = append(permitted, a)
		}
	}
	if len(permitted) == 0 {
		return h, nil, errUpstreamBlocked
	}
	return h, permitted, nil
}

// splice copies clientSide to upstream and upstream to client until the upstream ends,
// then closes both. With halfClose (tunnels), the end of clientSide is passed on as a
// TCP half-close; a forwarded HTTP request is not (servers may read a FIN as an abort).
// upstream is tracked so Close ends it.
func (p *Proxy) splice(client, upstream net.Conn, clientSide io.Reader, halfClose bool) {
	if !p.track(upstream) {
		return
	}
	defer p.untrack(upstream)
	done := make(chan struct{})
	p.wg.Add(1)
	go func() { // client → upstream
		defer p.wg.Done()
		defer close(done)
		_, _ = io.Copy(upstream, clientSide)
		if halfClose {
			switch uc := upstream.(type) {
			case *net.TCPConn:
				_ = uc.CloseWrite()
			case *prefixedConn:
				_ = uc.CloseWrite()
			}
		}
	}()
	_, _ = io.Copy(client, upstream) // upstream → client, until the upstream finishes
	client.Close()
	<-done
}

// defaultResolve looks host up with the system resolver, except "localhost" and its
// subdomains, which are loopback without a lookup (RFC 6761 §6.3; the reference's musl
// resolver answers "other.localhost" with 127.0.0.1 where Go's may fail).
func defaultResolve(ctx context.Context, host string) ([]netip.Addr, error) {
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return []netip.Addr{netip.AddrFrom4([4]byte{127, 0, 0, 1}), netip.IPv6Loopback()}, nil
	}
	return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
}
