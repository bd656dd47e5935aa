package transparent

import (
	"net/netip"
	"time"
)

// Wire constants: the addresses and names the reference uses inside the namespace
// (probed on codex 0.171.0: ip addr, ip route, /etc/resolv.conf and getent inside a
// transparentTcp sandbox; spec/network-proxy.md §8.3).
var (
	// Local4 and Local6 are the tun device's own addresses (192.0.2.1/32,
	// 2001:db8::1/128, documentation ranges), the command's source addresses.
	Local4, Local6 = netip.MustParseAddr("192.0.2.1"), netip.MustParseAddr("2001:db8::1")
	// FakeBase4 and FakeBase6 are the pools of the fake addresses the resolver hands
	// out: the n-th name gets FakeBase4+n and FakeBase6+n (198.18.0.3 and
	// fdc0:de00::3 for the third name, probed).
	FakeBase4, FakeBase6 = netip.MustParseAddr("198.18.0.0"), netip.MustParseAddr("fdc0:de00::")
	// Resolver is the in-namespace DNS server named by /etc/resolv.conf.
	Resolver = netip.MustParseAddrPort("127.0.0.53:53")
)

const (
	// DeviceName is the tun device's name (probed).
	DeviceName = "codextun"
	// ResolvConf is the /etc/resolv.conf the sandbox sees (22 bytes, probed).
	ResolvConf = "nameserver 127.0.0.53\n"
	// MTU of the tun device (probed: mtu 1500).
	MTU = 1500
)

// Implementation constants (our choice).
var (
	// peer4 and peer6 are the virtual peers the NAT rewrites captured SYNs to come
	// from: routed out of the tun device (the default route), never local.
	peer4 = netip.MustParseAddr("192.0.2.2")
	peer6 = netip.MustParseAddr("2001:db8::2")
)

const (
	// maxNames bounds the fake-address table: 198.18.0.0/15 holds 131070 hosts and
	// the v6 pool is larger; 65534 names keeps every v4 address in 198.18.0.0/16.
	maxNames = 1<<16 - 2
	// maxSessions bounds the NAT table (one entry per captured TCP connection, live
	// or lingering); SYNs beyond it are dropped, so the command's connect times out.
	maxSessions = 4096
	// natPortFirst..natPortLast are the virtual peer's source ports, one per session.
	natPortFirst = 10000
	natPortLast  = natPortFirst + maxSessions*4 - 1
	// sessionLinger is how long a session's mapping outlives its connection, so
	// late FIN/ACK segments still find it; an unanswered SYN's session expires too.
	sessionLinger = 60 * time.Second
	// dialTimeout bounds the SOCKS5 exchange with the executor's proxy (through the
	// bridge), decision callbacks included (their own bound is the proxy's).
	dialTimeout = 10 * time.Minute
	// refuseGrace is how long a refused connection waits for the command's first bytes
	// before it is reset. The kernel completes the command's connect before the
	// capture even accepts, but a reset that lands before the command has looked at
	// its connect's result turns "connected, then reset" (what the reference shows:
	// curl 56) into a failed connect, after which clients try the name's next address
	// and cause a second decision.
	refuseGrace = 100 * time.Millisecond
	// ttl of every fake answer, seconds: short, since the table is per sandbox.
	ttl = 1
	// maxDNSMessage is the largest DNS query read over UDP (RFC 1035 §4.2.1 512 bytes,
	// EDNS0 clients may send more; anything longer is dropped).
	maxDNSMessage = 1232
)
