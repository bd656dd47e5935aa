// Package forward bridges one harness stream to an existing exec-server: `executor
// exec-server forward --connect ws://…` hands every authenticated harness stream (the
// Noise channel, terminated by cmd/executor/internal/remote) to Bridge, which opens a fresh
// WebSocket to the target and passes JSON-RPC messages through whole, in both directions,
// until either side ends; then it closes the other.
//
// Layers: above coder/websocket (via internal/wsmsg) and the message-conn shape of
// executor/jsonrpc; below cmd/executor (flags) and internal/remote (registration,
// rendezvous, Noise). It knows nothing of JSON-RPC beyond message boundaries: it never
// parses a message, so it forwards any method either side speaks.
//
// Concurrency: Bridge starts two pumps (harness→target, target→harness) and returns only
// after both have exited. Each pump blocks on its destination (back-pressure is the
// slower side's): nothing is queued in between. Limits (limits.go): DialTimeout bounds
// the target's connect; MaxMessageBytes bounds one message read from the target.
package forward
