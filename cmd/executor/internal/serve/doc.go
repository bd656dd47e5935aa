// Package serve runs the executor's JSON-RPC server on a local transport: a WebSocket
// listener (`--listen ws://IP:PORT`) or the process's stdin/stdout (`--listen stdio`).
//
// WebSocket listener (spec/jsonrpc.md §1.1, registry-auth.md §13): prints the bound
// `ws://IP:PORT` as one line on stdout; upgrade on `/`; `GET /readyz` → 200; any request
// carrying an Origin header → 403 (browsers are never allowed); other paths → 404; Text
// and Binary frames accepted, replies in Text; a ping every 30 s and a missing pong within
// 60 s drops the connection. Stdio: one JSON message per line; EOF on stdin shuts the
// whole server down, killing every process.
//
// Run owns every goroutine it starts (listener, per-connection serve and ping loops)
// and returns after they exit. Cancelling its ctx (SIGTERM/SIGINT in main) stops
// accepting, closes connections and kills every process of every session.
package serve
