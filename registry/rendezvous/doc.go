// Package rendezvous is the self-hosted rendezvous service: it accepts the executor's and the
// harnesses' relay websockets and routes RelayMessageFrames between them by stream_id
// (spec/relay-noise.md §1, §4, §9, §10, §13). It never decrypts: payloads are opaque, and it
// reads only each frame's stream_id (relay/frame.Decode + Validate).
//
// # Layers
//
// Below: relay/wsconn (websocket accept, binary messages, 256 KiB limit, ping/pong) and
// relay/frame (stream_id). Beside: registry/server mints the signed URLs (Signer) and asks
// Online before handing out a connect bundle; this package does not know the store, tokens or
// Noise keys.
//
// # URLs
//
// Every socket URL is signed by the registry (Signer): HMAC-SHA256 over the role
// ("environment" or "harness"), the environment id, the registration generation, an expiry
// and a nonce, with one key of a ring (k= names it; registry/server rotates the ring and
// shares it between nodes through its store). The host is not signed, so a URL verifies on
// every node holding the ring. The upgrade of a URL with a bad or expired signature is answered HTTP 401
// before any websocket is accepted; the executor then re-registers (spec §11). So is a URL
// that expires later than its role's lifetime (ExecutorURLTTL, HarnessURLTTL) plus
// MaxClockSkew from now: the registry never signs one, so whoever obtained a key cannot
// mint a URL that outlives key rotation. The 401 body is fixed text, never the URL. An executor URL
// whose generation is no longer the environment's current one (a newer registration fenced
// it) is also refused with 401.
//
// The hooks Options.ExecutorAttached/ExecutorDetached tell the registry which executor
// sockets this Hub holds (registry/server records them, so connect on another node can hand
// out this node's URL); this package knows nothing of other nodes.
//
// # Routing rules
//
//   - One executor socket per environment. A new executor socket of the current generation
//     replaces the previous one (closing it and its harness sockets); registering a newer
//     generation (Fence) closes the older executor socket.
//   - One stream per harness socket: the first frame that decodes and validates claims its
//     stream_id. A claim of a stream_id that a live harness socket of the environment already
//     holds closes the newcomer. Later frames for other stream ids, and frames that do not
//     decode or validate, are dropped and counted (malformed ones warned about, at most once
//     per MalformedWarnInterval).
//   - Executor frames go to the harness socket holding their stream_id; frames for unknown
//     streams are dropped.
//   - When a harness socket ends, the executor gets reset{noise_relay_protocol_error} for its
//     stream. When the executor socket ends, every harness socket bound to it is closed.
//
// # Admission and harness frame order (security issue 13)
//
// The executor's own rules stay the reference's (relay/mux, spec/relay-noise.md §12): 8
// charged handshake failures per physical socket pause every new handshake for 10 s. Since
// all harnesses of an environment share that one socket, the rendezvous keeps one harness
// token (the URL's Subject, registry/server's token id) from spending the budget for all:
//
//   - A signed harness URL opens one socket (a second upgrade: 401). At most
//     MaxHarnessSockets harness sockets per environment and MaxHarnessSocketsPerSubject per
//     subject (beyond: 429). At most MaxConcurrentUpgrades upgrades in progress (beyond: 503).
//   - A harness socket follows spec/relay-noise.md §4.1: resume (optional), one handshake,
//     and data only after the executor's message 2. A second handshake or early data — each
//     a charged failure at the executor — is not forwarded: the socket is closed and the
//     subject charged one failure instead. A socket without message 2 after
//     HarnessHandshakeTimeout is closed (not charged).
//   - When the executor resets a harness's stream, the reset is delivered and the socket
//     closed (the released harness drops it anyway); a reset before any executor data is a
//     failed stream of the subject.
//   - Each subject has at most HarnessFailureBudget minus its unforgiven failures
//     handshakes in flight (forwarded, not yet settled by executor data, a reset or the
//     socket's end): further handshakes wait. With HarnessFailureBudget failures, one
//     forgiven per HarnessFailureForgiveness, the subject's upgrades get 429, its queued
//     handshakes close their sockets, and HarnessAllowed (asked by connect) refuses it.
//
// So one token causes at most HarnessFailureBudget (3) charged failures at once, and then one
// per two minutes: the executor's budget of 8 is not spent by one abuser in one burst, and
// other tokens keep connecting.
//
// # Queues and back-pressure (the overflow policy)
//
// Each socket has one outbound queue bounded by QueueFrames frames and QueueBytes bytes,
// drained by a writer goroutine that exists only while the queue is non-empty. Nothing is ever
// dropped from a live stream:
//
//   - harness → executor: the harness's reader blocks until the executor queue has room
//     (TCP back-pressure onto that harness). The executor's writes are bounded by the
//     websocket write deadline (60 s); a stuck executor socket fails and ends every stream.
//   - executor → harness: the executor's reader blocks at most SlowConsumerTimeout for room
//     in that harness's queue; then the harness socket is closed (the executor gets a reset,
//     the harness recovers on a new stream and catches up with process/read). So one slow
//     harness stalls the executor and the other harnesses for at most SlowConsumerTimeout.
//
// # Liveness
//
// Every socket gets a websocket Ping PingInterval (10 s) after accept and 10 s after each
// Pong, one at a time; no Pong within PongTimeout (20 s) drops it. So a dead-but-not-reset
// link (a stall: no FIN, no RST) is dropped within 30 s of its last Pong — the harness's
// socket is then closed, or the executor's streams reset, and recovery starts — instead of
// the released peers' 90 s (spec §10; they keep their schedule towards us and answer ours).
// Pongs are only seen while a socket's read loop reads: when the loop was parked by
// back-pressure for most of the wait (wsconn.Conn.ReaderWasParked), the wait is re-armed
// instead. A timer (not a goroutine) waits between pings, so an idle socket costs one
// goroutine, its read loop.
//
// # Concurrency and ownership
//
// Hub is safe for concurrent use. ServeHTTP accepts the websocket and starts the socket's
// read loop on a fresh goroutine (the request goroutine returns); a socket also has a writer
// goroutine while frames are queued and a ping goroutine while a Ping is outstanding. The Hub
// owns and waits for all of them: Close closes every socket and returns after they have
// stopped; nothing starts after Close.
//
// Memory (BenchmarkHub_IdleSocketMemory): about 17 KB of heap+stack per idle socket at
// 10,000 sockets.
//
// It does not import coder/websocket: sockets are accepted, pinged and framed through
// relay/wsconn (whose accepted ws:// conns write each binary frame in one writev).
//
// Lock order: Hub.mu → environment.mu → socket.mu → outQueue.mu (attach closes a replaced
// executor socket while holding environment.mu). admission.mu and Hub.warnMu are leaves,
// taken with no other lock held. No lock is held across a websocket read or write, or while
// a push or a handshake waits for room.
//
// # Logging
//
// Debug only, through the injected logger: never payloads, never the URL query (sig=), never
// reset reasons from peers.
package rendezvous
