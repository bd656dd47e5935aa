// Package serve runs the executor's JSON-RPC server on a local transport: a WebSocket
// listener (`--listen ws://IP:PORT`) or the process's stdin/stdout (`--listen stdio`).
//
// # Layers
//
// Above: package main (`executor serve`, and `executor dev`'s local pieces), which parses
// flags into Config and cancels Run's ctx on SIGTERM/SIGINT. Below: package executor
// (Server.ServeConn per connection), internal/wsmsg (one WebSocket message = one
// jsonrpc.MessageConn message), internal/wsauth (listener auth), internal/connlimit (the
// connection cap) and coder/websocket. It holds no JSON-RPC logic: a connection's bytes go
// straight to ServeConn with a ConnInfo naming the transport and peer (which only changes
// the parse-error text).
//
// # Contract
//
// WebSocket listener (spec/jsonrpc.md §1.1, registry-auth.md §13), routes in the
// reference's order: any request carrying an Origin header → 403 (browsers are never
// allowed); `GET|HEAD /readyz` → 200 (never authenticated); other paths → 404; on `/`
// the reference's upgrade checks (405 `Request method must be `GET“, 400 for the
// Connection, Upgrade, Sec-WebSocket-Version and Sec-WebSocket-Key headers), then listener
// auth (Config.Auth, internal/wsauth: 401 with a fixed text body), then the upgrade. Text
// and Binary frames accepted, replies in Text; a ping every 30 s and a missing pong within
// 60 s drops the connection. The bound `ws://IP:PORT` is printed as one line on stdout.
// Stdio: one JSON message per line; EOF on stdin shuts the whole server down, killing
// every process; --ws-auth is refused with it (ErrAuthWithStdio).
//
// On a listener without auth, an upgrade whose client socket is held by a sandboxed
// descendant of the executor gets 403 (peer_linux.go, best effort through /proc), and
// the first sandboxed process/start with network access logs one warning naming the
// remedy (watch.go: a ConnInfo hook the executor calls once it has decoded the request;
// the transport itself never parses messages). Tokens and Authorization values are never
// logged.
//
// # Limits (limits.go)
//
// Liveness: PingInterval 30 s and PongTimeout 60 s (the reference's). One inbound
// message or stdio line: MaxMessageBytes (64 MiB). Hardening, ours (the reference sets
// none beyond a header-size bound): ReadHeaderTimeout 10 s, RequestReadTimeout and
// RequestWriteTimeout 30 s and IdleTimeout 30 s for non-upgrade requests (cleared by the
// upgrade), MaxHeaderBytes 64 KiB, a connection cap of DefaultMaxConns (512, lowered to
// half the soft RLIMIT_NOFILE, never below MinMaxConns) enforced by internal/connlimit
// (at the cap the oldest new or idle connection is evicted, so idle sockets cannot
// starve a legitimate request), MaxInFlightUpgrades (64; 503 beyond it) and
// MaxPeerScanFDs for the peer check. ShutdownGrace (5 s) bounds how long Run waits for
// connections after ctx ends.
//
// # Concurrency and ownership
//
// Run owns every goroutine it starts (listener, per-connection serve and ping loops)
// and returns after they exit. Cancelling its ctx stops accepting, closes connections
// and kills every process of every session; the executor.Server is created and closed
// by Run. Locks: none of its own beyond connlimit's leaf lock.
package serve
