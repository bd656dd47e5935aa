// Package session keeps the executor's JSON-RPC sessions: creation on initialize, one
// live attachment at a time, detach on disconnect with a time-to-live, resume, eviction.
//
// A Session owns a State (the process table) that outlives connections; the Registry
// closes it when the session expires or the registry closes. Attachments are identified
// by an opaque Owner token (the connection).
//
// Rules (spec/jsonrpc.md §2.3–§2.4):
//   - Resume of an unknown id, or of a detached session past its deadline (which is then
//     removed and closed), fails with ErrUnknownSession.
//   - Resume of a session attached to a live owner fails with ErrAttached (-32010).
//   - Detach starts a fresh deadline of TTL; if the session is still detached from that
//     same owner when it fires, the session is removed and its State closed.
//
// Concurrency: all methods are safe for concurrent use. Registry.mu guards the session
// map and every Session's attachment fields; State.Close runs outside the lock. The
// registry's expiry timers are its only goroutines; Close stops them and waits.
package session
