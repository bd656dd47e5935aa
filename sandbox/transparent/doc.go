// Package transparent is transparent TCP inside the managed-network sandbox
// (spec/network-proxy.md §8.3, codex 0.171.0's networkProxy.proxy.transparentTcp and
// --linux-sandbox-transparent-tcp): the command's direct TCP connections and name
// lookups in the sandbox's network namespace are captured and carried, as SOCKS5
// CONNECT requests, to the executor-local proxy's SOCKS5 policy, which decides and
// audits them (protocol socks5_tcp) exactly as it does for a client that speaks SOCKS5
// itself. Loopback stays inside the namespace.
//
// # Layers
//
// Above: package sandbox. Its launcher (host namespaces) binds /dev/net/tun and a
// resolv.conf naming Resolver into the bwrap sandbox and grants the inner stage
// CAP_NET_ADMIN, CAP_NET_BIND_SERVICE and CAP_SETPCAP; the inner stage calls Setup,
// drops every capability and re-executes itself, then calls Start with the two
// descriptors and a DialFunc to the managed-network bridge's Unix socket of the SOCKS5
// route. Below: the kernel (tun, rtnetlink) and the standard library. It knows no
// policy, no JSON-RPC and no proxy variables.
//
// # Mechanism, and why
//
//	command ──connect D:d──► kernel ──default route──► codextun ──► routineTun (NAT)
//	      ──rewritten back into codextun──► kernel TCP ──► listener on Local4/Local6
//	      ──► routineConn ──SOCKS5 CONNECT name|D : d──► bridge ──► executor's SOCKS5 policy
//
// The choices:
//
//   - A tun device (as the reference: codextun, 192.0.2.1/32 and 2001:db8::1/128,
//     default routes through it; probed with ip addr / ip route in its sandbox).
//     Alternatives weighed: iptables/nftables REDIRECT + SO_ORIGINAL_DST needs the nat
//     tables (kernel modules that a CI container may lack) and an iptables binary or
//     hand-written nftables netlink; a userspace TCP stack (gVisor's netstack) is a
//     very large dependency (no such module is among the allowed ones). The tun device
//     needs only CAP_NET_ADMIN in the namespace the sandbox already owns.
//   - No userspace TCP: nat.go rewrites addresses so that the kernel's own TCP stack
//     terminates the command's connection on a local listener (the "system stack"
//     technique): a SYN from Local:s to D:d is rewritten to come from the virtual peer
//     (192.0.2.2 / 2001:db8::2) on a per-session port n and to go to the listener;
//     the listener's replies, addressed to the peer, come back out of the device and
//     are rewritten to come from D:d. The accepted connection's remote port n names
//     the session, hence D:d. Only address, port and checksum bytes change.
//   - Names: /etc/resolv.conf is "nameserver 127.0.0.53" (ResolvConf, probed), and
//     the resolver answers every A/AAAA question with a fake address from
//     198.18.0.0/16 / fdc0:de00::/104 (FakeBase4/6 + n for the n-th name, probed:
//     198.18.0.3 for the third name); a captured connection to a fake address is sent
//     to SOCKS5 as the name, so the policy (and the audit's host) sees the name, as
//     the reference's does. Other addresses go as literals (a private one is refused
//     not_allowed_local by the policy). /etc/hosts is untouched ("localhost" resolves
//     to 127.0.0.1 and stays inside).
//   - A refused destination: the kernel has already accepted the connection (the
//     command sees "connected", as with the reference), then the SOCKS5 reply is not
//     "succeeded" and the connection is reset (SO_LINGER 0): curl exits 56, as the
//     reference's does.
//
// # Contract
//
//   - Setup: privileged; creates the device, addresses (IPv6 only when the kernel has
//     it, with NODAD), default routes, and binds Resolver (UDP). Returns the resolver's
//     descriptor; every failure is an error and the caller must not run the command.
//   - Start: unprivileged; owns both descriptors from then on. Close resets every
//     captured connection and returns after every routine has ended.
//   - Only TCP is captured. Other IP traffic read from the device (UDP other than to
//     the resolver, ICMP, fragments, IPv6 extension headers) is dropped: such sockets
//     simply get no answer. The resolver answers UDP only.
//
// # Limits (limits.go)
//
// At most maxNames names (then SERVFAIL), maxSessions NAT sessions (then SYNs are
// dropped), sessions linger sessionLinger after their connection ends.
//
// # Concurrency
//
// A Capture owns: routineTun (reads the device, translates, writes back), the resolver
// routine, one accept routine per listener, one routine per captured connection and,
// once spliced, one copy routine for its upstream direction. nat and fakeTable have
// one mutex each, never held across I/O or each other. Close cancels the SOCKS5 dials,
// closes the descriptors, listeners and tracked connections, then waits.
//
// # Known differences from the reference
//
//   - The command can see /dev/net/tun (bound for the setup, which must open it inside
//     the namespace); it cannot use it: creating or attaching an interface needs
//     CAP_NET_ADMIN and the one device is single-queue and held. The reference's
//     sandbox has no /dev/net.
//   - /etc/resolv.conf is a bind of a file in the launcher's proxy directory (the
//     reference's is a tmpfs file); same contents.
//   - The IPv6 address carries IFA_F_NODAD (ip shows "nodad"), so it is usable at once.
package transparent
