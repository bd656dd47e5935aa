// Package initiator is the harness's (Noise initiator's) side of one relay stream: it
// opens the stream on its own rendezvous socket with a resume frame, carries the Noise
// handshake messages and sealed records of that one stream with the initiator's per-frame
// rules (spec/relay-noise.md §13), and runs ARQ v1 on it when the executor accepts the
// offer (docs/reliability.md §8).
//
// Layers: below it a Conn (defined here; a relay/wsconn socket, dialled by the caller, one
// per stream, as the reference harness does) and relay/frame for the codec; beside it relay/mux, the executor's
// side of the same frames; above it the harness SDK, which adapts a Stream to
// noise/channel's RecordConn (the twin Packet types convert directly) and recovers the
// session when a stream fails. It carries opaque bytes: it knows nothing of Noise, JSON-RPC
// or the registry.
//
// # Per-frame rules (spec/relay-noise.md §13)
//
//	frame of another stream_id                    ignored
//	resume, ack_frame, heartbeat                  ignored (an ARQ stream applies ack_frame)
//	handshake                                     the first is message 2; a second fails
//	data                                          returned in arrival order (released) or in
//	                                              seq order (ARQ)
//	reset                                         fails with ErrStreamReset (the peer's
//	                                              reason is discarded)
//	text message, undecodable or invalid frame    fails the stream
//
// Released wire behaviour (codex 0.169.0 and 0.171.0) is the default: frames are byte for
// byte the reference harness's (no traceparent, no feature bits, ack fields 0). With
// Options.OfferARQ the handshake frame carries frame.FeatureARQ; an unmarked message 2 (a
// released executor) leaves the stream released. A released stream that sees a record
// missing for 2 s while later ones wait gives up (nothing would resend it) so that the
// session recovery above replaces it.
//
// # ARQ v1
//
// relay/arq's Endpoint holds the state; its timers are driven by arq.Timers, the one driver
// relay/mux uses too. A read routine reads every frame of the socket (so acks are seen while
// nobody reads records) and queues the records released in order, at most 8 MiB
// (limits.go); when the queue is full it stops reading: TCP back-pressure, as a released
// harness that stops reading. WritePacket waits for room in the send window.
//
// # Concurrency and ownership
//
// A Stream owns its socket, the socket's keepalive goroutine and, with ARQ, the read routine
// and the timers' drive goroutines; Close drops the socket (no close frame, as the
// reference harness) and returns after all of them exited. Locks: Stream.arqMu (startARQ
// against Close), arqConn.mu (the read queue) and Stream.wmu (socket writes) are leaves,
// never held while another is taken; the Endpoint's lock is taken inside Stream.wmu only to
// read the freshest ack (TakeAck), and the arq.Timers lock is arq's own.
//
// Logging: none; errors carry the context.
package initiator
