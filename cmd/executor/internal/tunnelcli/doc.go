// Package tunnelcli is `executor tunnel`: local listeners whose connections are carried to
// the executor's host through port tunnels (docs/protocol-extensions.md, "Port tunnels";
// harness.Client.DialTCP).
//
//   - -L [BIND:]LPORT:HOST:HPORT (ssh's syntax): each connection accepted on BIND:LPORT
//     (BIND defaults to 127.0.0.1) is tunnelled to HOST:HPORT as the executor sees it.
//   - -D [BIND:]PORT: a SOCKS5 listener (RFC 1928, no authentication, CONNECT only, IPv4,
//     IPv6 and domain names, the name resolved by the executor); each CONNECT opens a
//     tunnel. Our own ~100 lines (socks.go) rather than a library: the subset is small,
//     the module's dependency rule (STYLE.md §18) asks for a written reason per module,
//     and the maintained Go libraries (golang.org/x/net/proxy) implement the client side
//     only.
//
// Lifetime: listeners are bound before the first connection to the executor and live
// until ctx ends (SIGINT/SIGTERM in main): a broken relay never closes them. The harness
// recovers its session transparently; tunnels open at the break are reset (their local
// connections closed with RST, one log line each). If the recovery fails, the session is
// dialled again with back-off while the listeners stay up; connections accepted
// meanwhile wait for it (at most ConnectWait) and are then closed.
//
// Every goroutine is owned by Run and waited for before it returns.
package tunnelcli
