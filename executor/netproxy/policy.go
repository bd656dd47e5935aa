package netproxy

// The domain policy (spec/network-proxy.md §5.2), a pure function of the compiled
// config and one request: no I/O, no goroutines. The resolution check of step 7 and the
// decider of step 5 (network/policyRequest, decider.go) sit outside it.

import (
	"net/netip"
	"strings"
	"time"
)

// Policy is the compiled domain policy of one proxy. It is immutable after Check returns
// it and safe for concurrent use.
type Policy struct {
	// Mode is the proxy mode: limited allows only GET, HEAD and OPTIONS.
	Mode Mode
	// AllowLocalBinding lets loopback and private destinations through (§5.2 step 3)
	// and fills NO_PROXY (§4).
	AllowLocalBinding bool
	// AllowUpstream is allowUpstreamProxy: SOCKS5 TCP may go through the executor's
	// mandatory TCP upstream (Options.TCPUpstream, upstream.go).
	AllowUpstream bool
	// EnableSocks5 starts the SOCKS5 listener.
	EnableSocks5 bool
	// CallbackTimeout is policyDecisionTimeoutMs; zero when callbacks are disabled.
	CallbackTimeout time.Duration

	deny, allow, review *patternSet
	// allowedExact holds the normalised allow patterns, for the "exact literal is
	// allowlisted" exception of the local/private rule.
	allowedExact map[string]bool
}

// Protocol is how a request reached the proxy (§5.1), as audit records name it.
type Protocol string

// Protocols.
const (
	ProtocolHTTP         Protocol = "http"
	ProtocolHTTPSConnect Protocol = "https_connect"
	ProtocolSOCKS5TCP    Protocol = "socks5_tcp"
	ProtocolSOCKS5UDP    Protocol = "socks5_udp"
)

// Request is one proxied request as the policy sees it.
type Request struct {
	Protocol Protocol
	// Host is the destination as the client named it (a name or an IP literal,
	// brackets allowed); Decide normalises it.
	Host string
	Port uint16
	// Method is the HTTP method; "CONNECT" for CONNECT; empty for SOCKS5.
	Method string

	// addrs and resolveErr are the resolution check's outcome for an allowed name when
	// local binding is not allowed (Proxy.decide, §5.2 step 7): the addresses the
	// connection may use, or why none may (errUpstreamBlocked).
	addrs      []netip.Addr
	resolveErr error
}

// Reason is the audit reason of a decision (§5.2).
type Reason string

// Reasons.
const (
	ReasonAllow            Reason = "allow"
	ReasonDenied           Reason = "denied"
	ReasonNotAllowed       Reason = "not_allowed"
	ReasonNotAllowedLocal  Reason = "not_allowed_local"
	ReasonMethodNotAllowed Reason = "method_not_allowed"
	ReasonMITMRequired     Reason = "mitm_required"
)

// Source is the audit source of a decision (§5.2).
type Source string

// Sources.
const (
	SourceBaselinePolicy Source = "baseline_policy"
	SourceModeGuard      Source = "mode_guard"
	SourceDecider        Source = "decider"
)

// Decision is the outcome of Decide.
type Decision struct {
	Allowed bool
	Reason  Reason
	Source  Source
	// ModeGuard marks a block by the limited-mode guard (step 6): its audit scope is
	// non_domain, and the domain decision before it was an allow.
	ModeGuard bool
	// Askable marks a not_allowed refusal (an allowlist miss or a review domain) that
	// the decider may overturn when callbacks are enabled (step 5).
	Askable bool
	// Override marks an allow by the decider (policyOverride in the audit record); with
	// ModeGuard, the decider allowed and the mode guard then blocked.
	Override bool
	// ByClient marks a deny or ask by the decider: Reason is the client's, the reply is
	// blocked-by-policy. Ask tells ask from deny.
	ByClient, Ask bool
}

// Decide applies §5.2 steps 1–4 and 6 to r: deny list, review domains, local/private
// destinations, allowlist, then the limited-mode guard (which, for SOCKS5, comes first).
// Review domains and allowlist misses are denied not_allowed and marked Askable: the
// proxy puts them to the decider (step 5) when callbacks are enabled.
func (p *Policy) Decide(r Request) Decision {
	isSOCKS := r.Protocol == ProtocolSOCKS5TCP || r.Protocol == ProtocolSOCKS5UDP
	if p.Mode == ModeLimited && isSOCKS {
		// Limited mode refuses SOCKS5 before any domain rule (observed: a not-allowed
		// host gets the mode-guard record only).
		return Decision{Reason: ReasonMethodNotAllowed, Source: SourceModeGuard, ModeGuard: true}
	}
	host := NormalizeHost(r.Host)
	if p.deny.match(host) {
		return Decision{Reason: ReasonDenied, Source: SourceBaselinePolicy}
	}
	if p.review.match(host) {
		return Decision{Reason: ReasonNotAllowed, Source: SourceBaselinePolicy, Askable: true}
	}
	if !p.AllowLocalBinding && IsLocalHost(host) && !p.allowedExact[host] {
		return Decision{Reason: ReasonNotAllowedLocal, Source: SourceBaselinePolicy}
	}
	if !p.allow.match(host) {
		return Decision{Reason: ReasonNotAllowed, Source: SourceBaselinePolicy, Askable: true}
	}
	if d, blocked := p.modeGuard(r); blocked {
		return d
	}
	return Decision{Allowed: true, Reason: ReasonAllow, Source: SourceBaselinePolicy}
}

// modeGuard is step 6 for a request the domain rules allowed: in limited mode, CONNECT
// is refused mitm_required and methods other than GET, HEAD and OPTIONS
// method_not_allowed.
func (p *Policy) modeGuard(r Request) (Decision, bool) {
	if p.Mode != ModeLimited {
		return Decision{}, false
	}
	switch {
	case r.Protocol == ProtocolHTTPSConnect:
		return Decision{Reason: ReasonMITMRequired, Source: SourceModeGuard, ModeGuard: true}, true
	case !limitedMethod(r.Method):
		return Decision{Reason: ReasonMethodNotAllowed, Source: SourceModeGuard, ModeGuard: true}, true
	}
	return Decision{}, false
}

// limitedMethod reports whether limited mode lets method through.
func limitedMethod(method string) bool {
	switch method {
	case "GET", "HEAD", "OPTIONS":
		return true
	}
	return false
}

// IsLocalHost reports whether a normalised host is loopback, private, link-local or
// unspecified: "localhost" itself, or such an IP literal. Subdomains of localhost are
// not (codex 0.171.0: other.localhost, not allowlisted, is refused not_allowed, not
// not_allowed_local; allowlisted, the resolution check still keeps it off loopback).
func IsLocalHost(host string) bool {
	if host == "localhost" {
		return true
	}
	ip, _, _ := strings.Cut(host, "%")
	a, err := netip.ParseAddr(ip)
	if err != nil {
		return false
	}
	return IsLocalAddr(a)
}

// IsLocalAddr reports whether a is not a public address: loopback, private (RFC 1918,
// fc00::/7), link-local, unspecified, or IPv4-mapped forms of those.
func IsLocalAddr(a netip.Addr) bool {
	a = a.Unmap()
	return a.IsLoopback() || a.IsPrivate() || a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast() || a.IsUnspecified()
}
