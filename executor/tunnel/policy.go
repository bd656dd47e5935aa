package tunnel

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
)

// FlagName is the command-line flag that sets the policy, named in refusals.
const FlagName = "--tunnel-allow"

// ListenFlagName is the flag that sets the listen policy (ParseListenPolicy).
const ListenFlagName = "--tunnel-listen-allow"

// Policy says which destinations a tunnel/open may reach. The zero value and nil refuse
// everything; DefaultPolicy allows loopback. A Policy is immutable and safe for
// concurrent use.
type Policy struct {
	rules  []rule
	spec   string // as given, for messages
	listen bool   // a bind policy (--tunnel-listen-allow)
}

// rule is one HOST|CIDR:PORT[-PORT] entry: exactly one of name and prefix is set.
type rule struct {
	name   string // lower-case host name, matched literally
	prefix netip.Prefix
	lo, hi uint16
}

// DefaultPolicy allows loopback destinations on every port: 127.0.0.0/8, ::1 and the
// name localhost.
func DefaultPolicy() *Policy { return loopbackPolicy(false, "loopback only (the default)") }

// ParsePolicy parses `--tunnel-allow` values. No values means DefaultPolicy; the single
// value "none" turns tunnels off (Enabled reports false). Each other value is
// HOST:PORT[-PORT] or CIDR:PORT[-PORT]; an IPv6 address or prefix is bracketed
// ("[fd00::/8]:5432"); a bare IP is a /32 or /128; PORT may be "*" for every port.
func ParsePolicy(specs []string) (*Policy, error) {
	if len(specs) == 0 {
		return DefaultPolicy(), nil
	}
	return parsePolicy(specs, false)
}

// DefaultListenPolicy allows binds to loopback addresses on every port (and port 0):
// 127.0.0.0/8, ::1 and localhost.
func DefaultListenPolicy() *Policy {
	return loopbackPolicy(true, "loopback binds only (the default)")
}

// loopbackPolicy is the default of both directions: 127.0.0.0/8, ::1 and localhost on
// every port, described as spec.
func loopbackPolicy(listen bool, spec string) *Policy {
	p, _ := parsePolicy([]string{"127.0.0.0/8:1-65535", "[::1]:1-65535", "localhost:1-65535"}, listen)
	p.spec = spec
	return p
}

// ParseListenPolicy parses `--tunnel-listen-allow` values: the addresses tunnel/listen
// may bind, with ParsePolicy's syntax ("0.0.0.0:8080" allows the wildcard bind on that
// port). No values means DefaultListenPolicy; "none" turns listening off.
func ParseListenPolicy(specs []string) (*Policy, error) {
	if len(specs) == 0 {
		return DefaultListenPolicy(), nil
	}
	return parsePolicy(specs, true)
}

func parsePolicy(specs []string, listen bool) (*Policy, error) {
	flag := FlagName
	if listen {
		flag = ListenFlagName
	}
	if len(specs) == 1 && specs[0] == "none" {
		return &Policy{spec: "none", listen: listen}, nil
	}
	p := &Policy{spec: strings.Join(specs, ", "), listen: listen}
	for _, s := range specs {
		r, err := parseRule(s)
		if err != nil {
			return nil, fmt.Errorf("%s %q: %w", flag, s, err)
		}
		p.rules = append(p.rules, r)
	}
	return p, nil
}

func parseRule(s string) (rule, error) {
	if s == "none" {
		return rule{}, errors.New(`"none" must be the only value`)
	}
	i := strings.LastIndexByte(s, ':')
	if i <= 0 {
		return rule{}, errors.New("want HOST|CIDR:PORT[-PORT]")
	}
	host, ports := s[:i], s[i+1:]
	var r rule
	var err error
	if r.lo, r.hi, err = parsePorts(ports); err != nil {
		return rule{}, err
	}
	if strings.HasPrefix(host, "[") && strings.HasSuffix(host, "]") {
		host = host[1 : len(host)-1]
	} else if strings.Contains(host, ":") {
		return rule{}, errors.New("bracket an IPv6 address or prefix: [ADDR]:PORT")
	}
	switch {
	case strings.Contains(host, "/"):
		pf, err := netip.ParsePrefix(host)
		if err != nil {
			return rule{}, fmt.Errorf("parsing CIDR: %w", err)
		}
		r.prefix = pf.Masked()
	default:
		if ip, err := netip.ParseAddr(host); err == nil {
			r.prefix = netip.PrefixFrom(ip.Unmap(), ip.Unmap().BitLen())
		} else if validHostName(host) {
			r.name = strings.ToLower(host)
		} else {
			return rule{}, errors.New("not a host name, IP address or CIDR")
		}
	}
	return r, nil
}

func parsePorts(s string) (lo, hi uint16, err error) {
	if s == "*" {
		return 1, 65535, nil
	}
	a, b, isRange := strings.Cut(s, "-")
	l, err := strconv.ParseUint(a, 10, 16)
	if err != nil || l == 0 {
		return 0, 0, fmt.Errorf("bad port %q", a)
	}
	h := l
	if isRange {
		if h, err = strconv.ParseUint(b, 10, 16); err != nil || h < l {
			return 0, 0, fmt.Errorf("bad port range %q", s)
		}
	}
	return uint16(l), uint16(h), nil
}

func validHostName(s string) bool {
	if s == "" || len(s) > 253 {
		return false
	}
	for _, c := range s {
		if !(c == '-' || c == '.' || c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return true
}

// Enabled reports whether any destination is allowed.
func (p *Policy) Enabled() bool { return p != nil && len(p.rules) > 0 }

// String describes the policy for logs and refusals.
func (p *Policy) String() string {
	if p == nil {
		return "none"
	}
	return p.spec
}

// RefusedError is returned by Resolve for a destination the policy does not allow.
type RefusedError struct {
	Dest   string
	Policy string
	Listen bool // a bind refused by the listen policy
}

func (e *RefusedError) Error() string {
	if e.Listen {
		return fmt.Sprintf("binding %s is not allowed by this executor's tunnel listen policy (%s); the executor's operator can allow it with %s HOST|CIDR:PORT[-PORT] on `executor remote` or `executor serve`",
			e.Dest, e.Policy, ListenFlagName)
	}
	return fmt.Sprintf("destination %s is not allowed by this executor's tunnel policy (%s); the executor's operator can allow it with %s HOST|CIDR:PORT[-PORT] on `executor remote` or `executor serve`",
		e.Dest, e.Policy, FlagName)
}

// Resolver looks host names up (net.Resolver in production).
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Resolve returns the address to dial for host:port, or a *RefusedError. A name rule
// allows the name as given (it is dialled by name); otherwise the name is resolved and the
// first address inside an allowed prefix is dialled, so a name cannot smuggle a
// destination past an address rule.
func (p *Policy) Resolve(ctx context.Context, r Resolver, host string, port uint16) (string, error) {
	dest := net.JoinHostPort(host, strconv.Itoa(int(port)))
	refused := &RefusedError{Dest: dest, Policy: p.String(), Listen: p != nil && p.listen}
	if !p.Enabled() || (port == 0 && (p == nil || !p.listen)) {
		return "", refused
	}
	lower := strings.ToLower(host)
	for _, r := range p.rules {
		if r.name != "" && r.name == lower && r.allowsPort(port) {
			return dest, nil
		}
	}
	var addrs []netip.Addr
	if ip, err := netip.ParseAddr(host); err == nil {
		addrs = []netip.Addr{ip}
	} else if validHostName(host) {
		found, err := r.LookupNetIP(ctx, "ip", host)
		if err != nil {
			return "", fmt.Errorf("resolving %s: %w", host, err)
		}
		addrs = found
	} else {
		return "", refused
	}
	for _, a := range addrs {
		a = a.Unmap()
		for _, r := range p.rules {
			if r.name == "" && r.prefix.Contains(a) && r.allowsPort(port) {
				return netip.AddrPortFrom(a, port).String(), nil
			}
		}
	}
	return "", refused
}

// allowsPort: port in the rule's range; port 0 (an ephemeral bind, listen policies only)
// when the range is every port, since the chosen port is unknown before the bind.
func (r rule) allowsPort(port uint16) bool {
	if port == 0 {
		return r.lo == 1 && r.hi == 65535
	}
	return port >= r.lo && port <= r.hi
}
