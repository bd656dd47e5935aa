// Package connlimit caps the open connections of an HTTP listener without letting idle
// sockets starve real clients (security issue 13, finding 2: 88 idle sockets on a 100-fd
// process timed a legitimate request out).
//
// It sits between net.Listener and net/http's Server: Listener wraps the accepted
// connections, and the Server's ConnState hook (Limiter.ConnState) tells it which ones
// may be evicted. Used by `executor serve` (cmd/executor/internal/serve) and by
// `registry serve` (registry/server); it knows nothing of either.
//
// Policy when a new connection would exceed the cap: close the connection that has waited
// longest in an evictable state — accepted with no request byte read yet
// (http.StateNew) or idle between keep-alive requests (http.StateIdle) — and admit the
// newcomer. A request being answered (StateActive), a hijacked connection (WebSocket
// sessions) and a closing one are never evicted. When nothing is evictable, Accept waits
// for a connection to close: the kernel's listen backlog takes the back-pressure.
//
// Limits: the cap is the caller's (each user derives it from its file-descriptor budget
// in its own limits.go). The eviction scan is O(1) (a list ordered by entry into an
// evictable state). Concurrency: every method is safe for concurrent use; Limiter.mu is
// a leaf lock, never held while a connection is closed.
package connlimit
