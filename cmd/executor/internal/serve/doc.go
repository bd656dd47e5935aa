// Package serve runs the executor's JSON-RPC server on a local transport: a WebSocket
// listener (`--listen ws://IP:PORT`) or the process's stdin/stdout (`--listen stdio`).
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
// Hardening (limits.go): header, request and idle timeouts for non-upgrade requests, a
// header-size cap, a connection cap (internal/connlimit: at the cap the oldest new or idle
// connection is evicted, so idle sockets cannot starve a legitimate request) and a
// bound on upgrades in progress (503 beyond it). On a listener without auth, an upgrade
// whose client socket is held by a sandboxed descendant of the executor gets 403
// (peer_linux.go, best effort through /proc), and the first sandboxed process/start with
// network access logs one warning naming the remedy (watch.go). Tokens and Authorization
// values are never logged.
//
// Run owns every goroutine it starts (listener, per-connection serve and ping loops)
// and returns after they exit. Cancelling its ctx (SIGTERM/SIGINT in main) stops
// accepting, closes connections and kills every process of every session. Locks: none
// of its own beyond connlimit's leaf lock.
package serve
