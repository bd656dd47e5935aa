// Package relay is the root of the rendezvous relay stack of the remote executor. It holds no
// code; it describes the layers below it.
//
// The relay carries opaque bytes between the executor (Noise responder) and harnesses (Noise
// initiators) over websockets to a rendezvous service (spec/relay-noise.md §1). One physical
// socket carries many streams, each keyed by the harness-chosen stream_id. Every websocket
// message is binary and holds exactly one protobuf RelayMessageFrame (schema
// proto/codex/exec_server/relay/v1/relay.proto).
//
// Layers, bottom up (these six packages are the whole relay):
//
//	relay/frame     RelayMessageFrame codec: sealed Frame type, Encode/Decode/Validate in the
//	                reference's check order, 256 KiB message cap, ErrNonBinary. No I/O, no
//	                goroutines.
//	relay/arq       per-stream ack/retransmit state machine of ARQ v1 (our negotiated
//	                extension, docs/reliability.md §8): pure sender window and resends,
//	                receiver order and ack/ack_bits; Timers, the one timer driver both
//	                sides use. No I/O.
//	relay/mux       the executor's (responder's) side: owns one frame connection: stream
//	                table, read loop and single writer, per-frame rules, bounded queues,
//	                resets, the handshake failure budget.
//	relay/initiator the harness's (initiator's) side: one stream on its own socket, opened
//	                with a resume frame; the initiator's per-frame rules; ARQ v1 when offered
//	                and accepted. The harness SDK links the relay only through it.
//	relay/wsconn    coder/websocket adapter (binary only, read limit, ping/pong liveness,
//	                dial with backoff); the only relay package that imports a websocket
//	                library.
//	relay/relaytest in-memory frame connections for tests (imported only by _test.go files).
//
// Above the relay sits noise/channel (handshake bytes and ordered records) and then the
// JSON-RPC executor; below it the websocket. The relay never looks inside handshake payloads
// or records: it imports none of noise, executor, registry, sandbox or encoding/json.
//
// Released wire behaviour (codex exec-server 0.169.0 and 0.171.0) is the default behaviour, and
// the only one with a released peer on the other end: data
// frames carry the channel's record seq (from 0) with segment_count 1, ack and ack_bits 0, no
// trace fields; the relay retransmits and acknowledges nothing, because the websocket below
// is already reliable and ordered; resets always carry "noise_relay_protocol_error"; resume,
// ack_frame and heartbeat frames are accepted and ignored. Record order is the business of
// noise/channel, above: it drops duplicate and stale records and reorders within a 64-record /
// 1 MiB window before decrypting.
//
// ARQ v1 (docs/reliability.md §8) is used on a stream only when both handshake frames carry
// relay feature bit frame.FeatureARQ (field 100, our extension; only our harness offers it
// and only our executor accepts it). On such a stream the rendezvous may drop records and
// both ends repair it: every data frame carries ack/ack_bits, ack_frames carry them alone,
// unacknowledged records are resent byte for byte (relay/arq), and records reach the channel
// above in order.
package relay
