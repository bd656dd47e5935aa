package main

import (
	"flag"
	"fmt"

	"github.com/execlab/executor/executor/tunnel"
)

// stringList collects a repeatable string flag.
type stringList []string

func (s *stringList) String() string     { return fmt.Sprint([]string(*s)) }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }

// tunnelAllowFlag adds --tunnel-allow and --tunnel-listen-allow (serve, remote) and
// returns their parser.
func tunnelAllowFlag(fs *flag.FlagSet) func() (dial, listen *tunnel.Policy, err error) {
	var v, lv stringList
	fs.Var(&v, "tunnel-allow", "destination port tunnels (executor tunnel, harness DialTCP) may reach: HOST:PORT[-PORT] or CIDR:PORT[-PORT], IPv6 bracketed, PORT may be *; repeatable; 'none' turns tunnels off (default: loopback only)")
	fs.Var(&lv, "tunnel-listen-allow", "addresses remote listeners (executor tunnel -R, harness ListenTCP) may bind on this host: HOST:PORT[-PORT] or CIDR:PORT[-PORT], IPv6 bracketed, PORT may be * (needed for port 0); repeatable; 'none' turns listeners off (default: loopback binds only)")
	return func() (*tunnel.Policy, *tunnel.Policy, error) {
		p, err := tunnel.ParsePolicy(v)
		if err != nil {
			return nil, nil, fmt.Errorf("%w: %w", errUsage, err)
		}
		lp, err := tunnel.ParseListenPolicy(lv)
		if err != nil {
			return nil, nil, fmt.Errorf("%w: %w", errUsage, err)
		}
		return p, lp, nil
	}
}
