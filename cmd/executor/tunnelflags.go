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

// tunnelAllowFlag adds --tunnel-allow (serve, remote) and returns its parser.
func tunnelAllowFlag(fs *flag.FlagSet) func() (*tunnel.Policy, error) {
	var v stringList
	fs.Var(&v, "tunnel-allow", "destination port tunnels (executor tunnel, harness DialTCP) may reach: HOST:PORT[-PORT] or CIDR:PORT[-PORT], IPv6 bracketed, PORT may be *; repeatable; 'none' turns tunnels off (default: loopback only)")
	return func() (*tunnel.Policy, error) {
		p, err := tunnel.ParsePolicy(v)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", errUsage, err)
		}
		return p, nil
	}
}
