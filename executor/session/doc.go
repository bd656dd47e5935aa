// Package session keeps the executor's JSON-RPC sessions: creation on initialize, one
// live attachment at a time, detach on disconnect with a time-to-live, resume, eviction.
//
// # Layers
//
// Above: package executor, which creates a session on `initialize`, resumes one on
// `initialize {resumeSessionId}`, and detaches it when the connection ends. Below:
// nothing but the standard library (crypto/rand for ids, time for expiry). The package
// is generic over the State it keeps (the executor's process table) and knows nothing of
// JSON-RPC, processes or transports; attachments are identified by an opaque Owner token
// (the connection), compared by identity.
//
// # Contract (spec/jsonrpc.md §2.3–§2.4)
//
//   - Create returns a session with a fresh random UUIDv4 id, attached to its owner.
//   - Resume of an unknown id, or of a detached session past its deadline (which is then
//     removed and closed), fails with ErrUnknownSession; of a session attached to a live
//     owner, with ErrAttached (the executor answers -32010, which a client may retry);
//     after Close, with ErrClosed.
//   - Detach by the current owner starts a fresh deadline of TTL; by any other owner it
//     is a no-op. If the session is still detached from that same detach when the
//     deadline fires, it is removed and its State closed.
//   - A Session owns a State that outlives connections; the Table closes it exactly
//     once, when the session expires or the table closes. State.Close must be
//     idempotent.
//
// # Limits
//
// Wire: DefaultTTL, 30 s of retention for a detached session (the reference's). The
// table has no cap of its own on the number of sessions: live ones are bounded by the
// listener's connection cap, detached ones by the TTL.
//
// # Concurrency and ownership
//
// All methods are safe for concurrent use. Table.mu guards the session map and every
// Session's attachment fields (owner, deadline, timer, detach generation); it is held
// only for map and field updates, and State.Close always runs outside it. The expiry
// timers are the table's only goroutines: each runs one callback that takes mu; a
// stale callback (the session was resumed, or detached again) does nothing. Close stops
// the timers, closes every State and waits for callbacks in flight.
package session
