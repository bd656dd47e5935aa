// Package remote runs `executor remote`: the composition of the registry client, the relay
// (wsconn + mux), the Noise responder and the JSON-RPC server. It is the only package that
// wires these layers together (STYLE.md package layout).
//
// Layers: above it only package main, which parses flags and environment defaults, turns
// mistakes into usage errors (exit 2) and calls RunCommand. Below it, in the order a harness
// request crosses them: registry/client (register, validate, credential sources),
// relay/wsconn (the rendezvous websocket), relay/mux (streams), noise/channel (handshake and
// records) and executor (the JSON-RPC server, with its sandbox launcher).
//
// With Command.Transport == TransportDirect (--remote-transport direct --aws-sigv4) none of
// the relay, Noise or registry credential layers is used: RunDirect (direct.go) registers with
// a SigV4 signature (registry/direct), keeps one signed WebSocket to the url it is given and
// serves plain JSON-RPC on it (docs/direct-transport.md) with the local listener's socket
// loop (cmd/executor/internal/serve.ServeWebSocket).
//
// Two entry points:
//
//   - RunCommand(ctx, *Command, stdin) is the whole command: it picks the credential source
//     (AuthConfig, in the reference's order), reads one-line credentials from stdin, runs the
//     stdin pump that outlives start-up (rotating credential frames, --exit-on-stdin-close),
//     creates the executor.Server, runs Run with it and closes it. It maps how it ended to
//     the CLI's outcome: nil for a signal or an EOF that stops the executor, the error
//     otherwise.
//   - Run(ctx, Config) is the relay loop below it, for callers that build their own Server
//     (executor dev, benchmarks): Run never closes the Server it is given.
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
//	    [Config.Tracer: a noise handshake span, child of the opening frame's field 11 traceparent]
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
// the keepalive loop; it returns after they have exited, so no ServeConn it started is still
// running. RunCommand owns the one stdin pump goroutine and the Server: both are stopped
// before it returns (a pump blocked on a terminal stdin, which cannot be interrupted, is the
// one exception; the process exits right after).
//
// Limits (limits.go): DefaultMaxStreams (the reference's 128) and the x-request-id format;
// the wire limits are those of the layers below.
package remote
