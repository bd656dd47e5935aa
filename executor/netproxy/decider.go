package netproxy

// The decider of spec/network-proxy.md §5.2 step 5 and §6: when policyDecisionTimeoutMs
// is set, a request the baseline policy refuses as not_allowed (an allowlist miss or a
// review domain) is put to the client with network/policyRequest. netproxy knows no
// JSON-RPC: Options.Decider carries the question out (executor/process sends it through
// the session's client link) and ParseVerdict reads the answer.
//
// Fail closed: anything but a well-formed answer — a transport error, a JSON-RPC error,
// a malformed or empty result, a reason with control characters or over
// MaxVerdictReasonBytes, no answer within the deadline, the proxy closing — is a deny
// with reason not_allowed and source decider (x-proxy-error blocked-by-allowlist).

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"
	"unicode"
	"unicode/utf8"
)

// MaxVerdictReasonBytes bounds a client's deny/ask reason (§6).
const MaxVerdictReasonBytes = 1024

// MaxAskHostBytes bounds a host put to the client; longer ones are never asked (§6).
const MaxAskHostBytes = 253

// deciderGrace is added to policyDecisionTimeoutMs: transport slack (§6, probed: T = 300
// ms answered after about 5.3 s).
const deciderGrace = 5 * time.Second

// VerdictKind is the client's decision type.
type VerdictKind string

// Verdict kinds (the decision's "type").
const (
	VerdictAllow VerdictKind = "allow"
	VerdictDeny  VerdictKind = "deny"
	VerdictAsk   VerdictKind = "ask"
)

// Verdict is a client's well-formed decision.
type Verdict struct {
	Kind VerdictKind
	// Reason is the client's reason (deny and ask only).
	Reason string
}

// Decider asks the client about r (network/policyRequest) and returns its raw result. It
// must return when ctx ends.
type Decider func(ctx context.Context, r Request) (json.RawMessage, error)

var errBadVerdict = errors.New("netproxy: malformed policy decision")

// ParseVerdict decodes a network/policyRequest result: {"decision":{"type":"allow"}},
// {"decision":{"type":"deny","reason":S}} or {"decision":{"type":"ask","reason":S}}.
// Unknown members are ignored. A missing decision, an unknown type, a missing or
// non-string reason, a reason over MaxVerdictReasonBytes or with control characters is
// an error.
func ParseVerdict(raw json.RawMessage) (Verdict, error) {
	var res struct {
		Decision *struct {
			Type   *string `json:"type"`
			Reason *string `json:"reason"`
		} `json:"decision"`
	}
	if t := bytes.TrimSpace(raw); len(t) == 0 || t[0] != '{' {
		return Verdict{}, errBadVerdict
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		return Verdict{}, fmt.Errorf("%w: %v", errBadVerdict, err)
	}
	if res.Decision == nil || res.Decision.Type == nil {
		return Verdict{}, errBadVerdict
	}
	switch k := VerdictKind(*res.Decision.Type); k {
	case VerdictAllow:
		return Verdict{Kind: k}, nil
	case VerdictDeny, VerdictAsk:
		r := res.Decision.Reason
		if r == nil || len(*r) > MaxVerdictReasonBytes || !printable(*r) {
			return Verdict{}, errBadVerdict
		}
		return Verdict{Kind: k, Reason: *r}, nil
	}
	return Verdict{}, errBadVerdict
}

// printable reports whether s is valid UTF-8 without control characters.
func printable(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if unicode.IsControl(r) {
			return false
		}
	}
	return true
}

// askableHost reports whether a normalised host may be put to the client: non-empty, at
// most MaxAskHostBytes, no whitespace or control characters.
func askableHost(h string) bool {
	if h == "" || len(h) > MaxAskHostBytes || !utf8.ValidString(h) {
		return false
	}
	for _, r := range h {
		if unicode.IsSpace(r) || unicode.IsControl(r) {
			return false
		}
	}
	return true
}

// askDecider resolves a not_allowed decision through the client (§5.2 step 5), then
// applies the limited-mode guard to an allow. ctx is the proxy's: Close cancels it.
func (p *Proxy) askDecider(ctx context.Context, r Request) Decision {
	fallback := Decision{Reason: ReasonNotAllowed, Source: SourceDecider}
	host := NormalizeHost(r.Host)
	if !askableHost(host) {
		return fallback
	}
	timeout := p.pol.CallbackTimeout
	if timeout < maxDuration-deciderGrace {
		timeout += deciderGrace
	} else {
		timeout = maxDuration
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	q := r
	q.Host = host
	raw, err := p.opts.Decider(ctx, q)
	if err != nil {
		p.log.Debug("policy decision failed; denied", "host", host, "error", err)
		return fallback
	}
	v, err := ParseVerdict(raw)
	if err != nil {
		p.log.Debug("malformed policy decision; denied", "host", host, "error", err)
		return fallback
	}
	if v.Kind != VerdictAllow {
		return Decision{Reason: Reason(v.Reason), Source: SourceDecider, ByClient: true, Ask: v.Kind == VerdictAsk}
	}
	if g, blocked := p.pol.modeGuard(r); blocked {
		g.Override = true
		return g
	}
	return Decision{Allowed: true, Reason: ReasonNotAllowed, Source: SourceDecider, Override: true}
}

const maxDuration = time.Duration(1<<63 - 1)
