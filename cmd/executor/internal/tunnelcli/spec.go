package tunnelcli

import (
	"fmt"
	"net"
	"strconv"
	"strings"
)

// Forward is one -L: connections to Bind are tunnelled to Host:Port.
type Forward struct {
	Bind string // host:port to listen on
	Host string
	Port int
}

// ParseLocal parses -L's [BIND:]LPORT:HOST:HPORT; IPv6 addresses are bracketed.
func ParseLocal(s string) (Forward, error) {
	f, err := parseForwardSpec("-L", "LPORT", s)
	if err != nil {
		return Forward{}, err
	}
	return Forward{Bind: net.JoinHostPort(f.bind, strconv.Itoa(f.listenPort)), Host: f.host, Port: f.port}, nil
}

// forwardSpec is the shared grammar of -L and -R: [BIND:]PORT:HOST:HPORT.
type forwardSpec struct {
	bind       string // default 127.0.0.1; "" and "*" mean 0.0.0.0
	listenPort int    // 0 allowed (a free port)
	host       string
	port       int
}

// parseForwardSpec parses s for flag (e.g. "-L"), naming the listening port portName in
// its usage error.
func parseForwardSpec(flag, portName, s string) (forwardSpec, error) {
	parts, err := splitColons(s)
	if err != nil {
		return forwardSpec{}, fmt.Errorf("%s %q: %w", flag, s, err)
	}
	bind, parts, ok := splitBind(parts, 3)
	if !ok {
		return forwardSpec{}, fmt.Errorf("%s %q: want [BIND:]%s:HOST:HPORT", flag, s, portName)
	}
	lport, err := port(parts[0], true)
	if err != nil {
		return forwardSpec{}, fmt.Errorf("%s %q: %w", flag, s, err)
	}
	hport, err := port(parts[2], false)
	if err != nil {
		return forwardSpec{}, fmt.Errorf("%s %q: %w", flag, s, err)
	}
	if parts[1] == "" {
		return forwardSpec{}, fmt.Errorf("%s %q: empty HOST", flag, s)
	}
	return forwardSpec{bind: bind, listenPort: lport, host: parts[1], port: hport}, nil
}

// ParseSocks parses -D's [BIND:]PORT into a listen address.
func ParseSocks(s string) (string, error) {
	parts, err := splitColons(s)
	if err != nil {
		return "", fmt.Errorf("-D %q: %w", s, err)
	}
	bind, parts, ok := splitBind(parts, 1)
	if !ok {
		return "", fmt.Errorf("-D %q: want [BIND:]PORT", s)
	}
	p, err := port(parts[0], true)
	if err != nil {
		return "", fmt.Errorf("-D %q: %w", s, err)
	}
	return net.JoinHostPort(bind, strconv.Itoa(p)), nil
}

// splitBind takes the optional BIND in front of a spec's n other fields: with n+1 parts
// the first is the bind address ("" and "*" mean 0.0.0.0), with n it is 127.0.0.1; ok is
// false for any other number of parts.
func splitBind(parts []string, n int) (bind string, rest []string, ok bool) {
	switch len(parts) {
	case n:
		return "127.0.0.1", parts, true
	case n + 1:
		bind = parts[0]
		if bind == "" || bind == "*" {
			bind = "0.0.0.0"
		}
		return bind, parts[1:], true
	}
	return "", nil, false
}

// splitColons splits at colons outside brackets, dropping the brackets.
func splitColons(s string) ([]string, error) {
	var parts []string
	cur := strings.Builder{}
	inBr := false
	for _, r := range s {
		switch {
		case r == '[' && !inBr && cur.Len() == 0:
			inBr = true
		case r == ']' && inBr:
			inBr = false
		case r == ':' && !inBr:
			parts = append(parts, cur.String())
			cur.Reset()
		default:
			cur.WriteRune(r)
		}
	}
	if inBr {
		return nil, fmt.Errorf("unclosed [")
	}
	return append(parts, cur.String()), nil
}

func port(s string, allowZero bool) (int, error) {
	p, err := strconv.Atoi(s)
	if err != nil || p < 0 || p > 65535 || (p == 0 && !allowZero) {
		return 0, fmt.Errorf("bad port %q", s)
	}
	return p, nil
}

// Remote is one -R: the executor listens on BindHost:BindPort (0: an ephemeral port) and
// each connection it accepts is connected here to Host:Port.
type Remote struct {
	BindHost string
	BindPort int
	Host     string
	Port     int
}

// Bind is the listen address on the executor's host, as given.
func (r Remote) Bind() string { return net.JoinHostPort(r.BindHost, strconv.Itoa(r.BindPort)) }

// ParseRemote parses -R's [BIND:]RPORT:HOST:HPORT (ssh's syntax); IPv6 addresses are
// bracketed. BIND defaults to 127.0.0.1; "" and "*" mean every address (0.0.0.0), which
// the executor's --tunnel-listen-allow must allow.
func ParseRemote(s string) (Remote, error) {
	f, err := parseForwardSpec("-R", "RPORT", s)
	if err != nil {
		return Remote{}, err
	}
	return Remote{BindHost: f.bind, BindPort: f.listenPort, Host: f.host, Port: f.port}, nil
}
