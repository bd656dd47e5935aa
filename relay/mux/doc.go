// Package mux multiplexes relay streams over one physical relay connection on the executor
// (Noise responder) side, applying the executor's per-frame rules of spec/relay-noise.md §12.
//
// Layers: below it a FrameConn (defined here; relay/wsconn provides the websocket one,
// relay/relaytest in-memory ones) carrying one encoded RelayMessageFrame per message; beside
// it relay/frame for the codec. Above it a Handler that runs each stream — in this project
// cmd/executor/internal/remote, which does the Noise handshake (noise/channel), the registry
// validation and the JSON-RPC session. The mux carries opaque bytes: it knows nothing of
// Noise, JSON-RPC, the registry or websockets.
//
// # Stream lifecycle
//
//	handshake frame, new id ──► pending ──(Handler writes msg 2)──► responded ──(Established)──► active
//	                               │                                    │                          │
//	                               └── ended: Handler returns / Close, peer reset, duplicate
//	                                   handshake or early data while pending, inbound overflow,
//	                                   socket end
//
// A handshake for a new stream id creates a Stream and runs the Handler on a goroutine owned
// by the Mux. The Stream's first ReadPacket returns message 1. The Handler's first
// handshake WritePacket (message 2) moves the stream to responded atomically, so data the
// harness sends right after message 2 is delivered, never mistaken for early data. A
// handshake write on a stream that is no longer pending fails (stale validation, spec §6.5).
// Established moves it to active. When the Handler returns (or calls Close) the stream ends
// and, unless the peer reset it or the socket is gone, a reset is sent.
//
// # Per-frame rules (spec/relay-noise.md §12.1)
//
//	text message / undecodable / invalid frame   drop with a warning (rate limited: warnlimit.go), socket stays
//	handshake, active or responded stream         reset that id, stream keeps running
//	handshake, pending stream                     cancel it (late result discarded), reset; charged
//	handshake, new id, cooldown                   reset, Handler not started; not charged
//	handshake, new id, MaxStreams active or
//	  MaxPending pending                          reset; not charged
//	handshake, new id                             start Handler; it failing before
//	                                              Established is charged
//	data, unknown id                              reset; not charged
//	data, pending                                 cancel, reset; charged (early data)
//	data, responded/active                        non-blocking enqueue; overflow → end, reset
//	reset, pending                                drop silently; not charged
//	reset, active/responded                       end the stream; no reply
//	ack_frame, ARQ stream                         apply its ack/ack_bits (arq.go)
//	resume, heartbeat; ack_frame otherwise        ignore
//
// Charged failures are counted per Mux (= per physical socket). The FailureBudget-th charge
// starts a Cooldown during which new handshakes are reset; charges during a cooldown are not
// counted; after it the counter restarts from zero. The socket is never closed for failures.
//
// # Outbound
//
// One writer goroutine owns FrameConn writes; every stream enqueues into one bounded queue of
// OutboundQueue frames. Overflow policy: data writes block (back-pressure to the stream's
// writer, bounded by its ctx); resets are best-effort (dropped when full); message 2 that
// cannot be enqueued closes the physical connection rather than leave a half-open stream
// (spec §12.3). Data frames carry the caller's seq, segment_count 1, ack fields 0 — except
// on a stream that negotiated ARQ v1 (arq.go, docs/reliability.md §8: only when the
// harness's handshake frame offered frame.FeatureARQ), whose frames carry ack/ack_bits,
// whose records are retained and resent, and whose message 2 carries the feature bit.
//
// # Concurrency and ownership
//
// Run owns the read loop (on Run's goroutine), the writer goroutine and every Handler
// goroutine; it returns only after all of them have exited. New starts nothing. Stream
// methods are safe for concurrent use; ReadPacket is meant for one goroutine at a time, as
// is WritePacket.
//
// Record buffers: a record's payload is the Mux's from WritePacket on. One of capacity
// internal/recbuf.Cap (noise/channel seals every record into one) goes back to that pool
// after its last reader, counted per buffer (recrefs.go): at once after its frame is
// encoded on a released stream, and on an ARQ stream once acknowledged (or the stream
// ended) and no resend of it is still queued, so resends stay byte-identical.
//
// Lock order: Mux.mu before Stream.mu before the stream's arq.Endpoint lock, before the
// record reference counts' lock (a leaf: SetHold's callback takes it). Mux.mu
// guards the stream table, counters, the failure budget and the closed flag; Stream.mu
// guards one stream's state and inbound queue. None is held while calling the FrameConn or
// the Handler. Run also owns the ARQ drive goroutines (arq.go, arq.Timers), counted with the
// Handlers: one runs for a stream only while a resend or an ack_frame is due, and a
// time.AfterFunc timer is armed only while a deadline is pending, so an idle ARQ stream
// holds no goroutine and no timer of its own (the arq.Timers lock is a leaf after Stream.mu).
//
// Tracing: the cleartext traceparent (relay frame field 11) of the frame that opened a
// stream is kept, unparsed and untrusted, as Stream.Traceparent for the Handler's tracer.
//
// Logging: component=relay/mux; never payloads, reset reasons from the peer, or anything from
// inside handshakes. Stream ids appear only at debug or in handshake-diagnostic warnings, as
// the reference does.
package mux
