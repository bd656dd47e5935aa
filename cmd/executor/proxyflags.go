package main

import (
	"errors"
	"flag"
	"net"
	"strconv"
	"strings"
)

// Managed-proxy flags of codex 0.171.0's exec-server:
//   - --linux-sandbox-transparent-tcp gives every sandboxed start with
//     enforceManagedNetwork transparent TCP (executor.Options.LinuxSandboxTransparentTCP,
//     probed on codex 0.171.0: test/conformance netproxy_transparent_tcp_flag);
//   - --tcp-upstream-proxy HOST:PORT is validated as the reference does; the
//     executor-local proxy chains its SOCKS5 TCP (transparent TCP included) through it
//     as HTTP CONNECT, and a managed-network process/start without a networkProxy fails
//     (-32602 "a mandatory TCP upstream requires an executor-local managed proxy"),
//     exactly the reference's answer (test/conformance netproxy_tcp_upstream).
type proxyFlags struct {
	transparentTCP *bool
	upstream       *upstreamProxy
}

func addProxyFlags(fs *flag.FlagSet) proxyFlags {
	p := proxyFlags{upstream: new(upstreamProxy)}
	p.transparentTCP = fs.Bool("linux-sandbox-transparent-tcp", false,
		"route the direct TCP of every managed-network Linux sandbox through the executor-local SOCKS5 proxy (transparent TCP)")
	fs.Var(p.upstream, "tcp-upstream-proxy",
		"HOST:PORT of the HTTP CONNECT proxy raw TCP must use from the managed SOCKS listener; a managed-network process/start without a networkProxy is refused")
	return p
}

// upstreamProxy is a validated --tcp-upstream-proxy value ("" = unset).
type upstreamProxy string

func (u *upstreamProxy) String() string { return string(*u) }

// Set checks HOST:PORT as the reference does: a port is required, numeric, nonzero
// and fits in 16 bits (observed from codex 0.171.0: "missing port", "TCP upstream
// proxy port must be nonzero", "parse port as u16").
func (u *upstreamProxy) Set(v string) error {
	host, port, err := net.SplitHostPort(v)
	if err != nil || host == "" || strings.TrimSpace(port) == "" {
		return errors.New("missing port")
	}
	n, err := strconv.ParseUint(port, 10, 16)
	if err != nil {
		return errors.New("parse port as u16")
	}
	if n == 0 {
		return errors.New("TCP upstream proxy port must be nonzero")
	}
	*u = upstreamProxy(v)
	return nil
}
