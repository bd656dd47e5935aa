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
	parts, err := splitColons(s)
	if err != nil {
		return Forward{}, fmt.Errorf("-L %q: %w", s, err)
	}
	bind := "127.0.0.1"
	switch len(parts) {
	case 3:
	case 4:
		bind, parts = parts[0], parts[1:]
		if bind == "" || bind == "*" {
			bind = "0.0.0.0"
		}
	default:
		return Forward{}, fmt.Errorf("-L %q: want [BIND:]LPORT:HOST:HPORT", s)
	}
	lport, err := port(parts[0], true)
	if err != nil {
		return Forward{}, fmt.Errorf("-L %q: %w", s, err)
	}
	hport, err := port(parts[2], false)
	if err != nil {
		return Forward{}, fmt.Errorf("-L %q: %w", s, err)
	}
	if parts[1] == "" {
		return Forward{}, fmt.Errorf("-L %q: empty HOST", s)
	}
	return Forward{Bind: net.JoinHostPort(bind, strconv.Itoa(lport)), Host: parts[1], Port: hport}, nil
}

// ParseSocks parses -D's [BIND:]PORT into a listen address.
func ParseSocks(s string) (string, error) {
	parts, err := splitColons(s)
	if err != nil {
		return "", fmt.Errorf("-D %q: %w", s, err)
	}
	bind := "127.0.0.1"
	switch len(parts) {
	case 1:
	case 2:
		bind, parts = parts[0], parts[1:]
		if bind == "" || bind == "*" {
			bind = "0.0.0.0"
		}
	default:
		return "", fmt.Errorf("-D %q: want [BIND:]PORT", s)
	}
	p, err := port(parts[0], true)
	if err != nil {
		return "", fmt.Errorf("-D %q: %w", s, err)
	}
	return net.JoinHostPort(bind, strconv.Itoa(p)), nil
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
