// Package frame encodes, decodes and validates the relay's RelayMessageFrame, the one protobuf
// message carried by every binary websocket message on a rendezvous socket
// (spec/relay-noise.md §2, §3).
//
// Layer: below relay/mux, relay/wsconn and registry/rendezvous (which reads only stream ids),
// above nothing (no I/O). It knows nothing of Noise,
// JSON-RPC or websockets; handshake and data payloads are opaque bytes.
//
// Protocol flow of one stream (spec/relay-noise.md §4):
//
//	harness  -> Resume{NextSeq: 0}       executor ignores it
//	harness  -> Handshake{msg 1}
//	executor -> Handshake{msg 2} | Reset
//	both     -> Data{Seq: 0, 1, ...}     one Noise record per frame, SegmentCount 1
//	executor -> Reset{"noise_relay_protocol_error"} when it ends the stream
//
// Contract:
//
//   - Frame is our own type; the generated proto/relayv1 structs are used only by this package's
//     tests, to cross-check the hand-written codec.
//   - Body is sealed: its dynamic type is always one of *Data, *Ack, *Resume, *Reset,
//     *Heartbeat, *Handshake, or nil (no body on the wire). Type switches over Body must return
//     an error in their default case.
//   - Encode appends to the caller's buffer, emits fields in ascending number order, omits zero
//     scalars as proto3 does, always emits the body (empty bodies as tag + zero length) and
//     rejects frames that fail Validate or exceed MaxMessageSize. EncodeUnvalidated skips
//     Validate, for tests that must put invalid frames on the wire.
//   - Decode parses without validating; callers run Validate next, as the reference does
//     (decode failure = check 0, then checks 1-6 of spec §3). Fields 11 traceparent and 12
//     tracestate are checked like the reference's optional strings; 11 is kept (Frame.Traceparent,
//     encoded only when non-empty), 12 discarded; field 100 (relay_features, our extension,
//     docs/reliability.md §8) is kept as Frame.Features when a varint and encoded only when
//     non-zero, so frames without it are byte-identical to the reference's; unknown fields
//     (13 and later) are skipped; a wrong wire type on a known field, a truncated field, invalid
//     UTF-8 in a string field or a message over MaxMessageSize are errors. These rules and the
//     validation texts are checked against the released binary by test/interop.
//   - Decode aliases its input: Data.Payload and Handshake.Payload point into b. It reuses the
//     Frame's current Body value when it has the same kind and keeps StreamID when the bytes are
//     unchanged, so decoding a stream's data frames into one Frame allocates nothing. Use Clone to
//     keep a frame beyond the life of b or the next Decode into the same Frame.
//   - Validate reproduces the reference's checks in its order and with its exact texts, plus one
//     implementation limit (stream ids over MaxStreamIDLen bytes).
//
// Concurrency: all functions are pure. A Frame is a plain value: do not Decode into a Frame
// that another goroutine reads.
//
// Limits: see limits.go (256 KiB websocket message, version 1, 1 KiB stream id).
package frame
