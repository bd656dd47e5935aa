package serve

import (
	"fmt"
	"net/netip"
	"strings"
)

// Listen is a parsed --listen value.
type Listen struct {
	Stdio bool
	Addr  netip.AddrPort // when !Stdio
}

// ParseListen parses `ws://IP:PORT`, `stdio` or `stdio://` with the reference's
// messages (registry-auth.md §13). Host names (even localhost) and paths are refused.
func ParseListen(s string) (Listen, error) {
	if s == "stdio" || s == "stdio://" {
		return Listen{Stdio: true}, nil
	}
	rest, ok := strings.CutPrefix(s, "ws://")
	if !ok {
		return Listen{}, fmt.Errorf("unsupported --listen URL `%s`; expected `ws://IP:PORT` or `stdio`", s)
	}
	ap, err := netip.ParseAddrPort(rest)
	if err != nil {
		return Listen{}, fmt.Errorf("invalid websocket --listen URL `%s`; expected `ws://IP:PORT`", s)
	}
	return Listen{Addr: ap}, nil
}
