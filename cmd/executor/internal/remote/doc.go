// Package remote runs `executor remote`: the composition of the registry client, the relay
// (wsconn + mux), the Noise responder and the JSON-RPC server. It is the only package that
// wires these layers together (STYLE.md package layout).
//
// # Flow (spec/relay-noise.md §11, spec/registry-auth.md §3–§4, §8)
//
//	generate one Noise identity (per process, never persisted or logged)
//	register (R1) ── retries only 503 registration_conflict / 502 authentication_service_unavailable
//	loop:
//	  dial the rendezvous url verbatim (x-request-id req_<32 hex>, traceparent when configured)
//	    4xx upgrade  → re-register at once (same identity), back off, dial the new url
//	    5xx/network  → back off, dial the same url
//	  serve the socket: mux.Run + wsconn.Keepalive; every handshake runs on its own goroutine:
//	    noise/channel responder → Authorize = registry validate (R2, 10 s, x-codex-noise-stream-id)
//	    → stream established → executor.Server.ServeConn (sessions outlive streams for the TTL)
//	  socket ended → back off (base reset to 1 s after a successful upgrade), dial again
//
// Backoff: base 1 s doubling to 30 s, delay uniform in [base/2, base] (wsconn.Backoff).
// Registration errors — at start or on a re-register — end Run with the registry's error
// (the CLI exits 1).
//
// # Logging (spec §14)
//
// log/slog, quiet by default. Events use the reference's vocabulary: noise_event
// (registration, rendezvous_connection, handshake, authorization), noise_outcome, noise_reason,
// request_id, connection_attempt. Never logged: keys, tokens, the authorization, the url's
// query, plaintext or ciphertext, peer reset reasons.
//
// # Concurrency
//
// Run owns everything it starts: per socket the mux (read loop, writer, stream handlers) and
// the keepalive loop; it returns after they have exited and after the executor server was
// closed (processes killed).
package remote
