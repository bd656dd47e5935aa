// Package relay is the root of the rendezvous relay stack of the remote executor. It holds no
// code; it describes the layers below it.
//
// The relay carries opaque bytes between the executor (Noise responder) and harnesses (Noise
// initiators) over websockets to a rendezvous service (spec/relay-noise.md §1). One physical
// socket carries many streams, each keyed by the harness-chosen stream_id. Every websocket
// message is binary and holds exactly one protobuf RelayMessageFrame (schema
// proto/codex/exec_server/relay/v1/relay.proto).
//
// Layers, bottom up (these four packages are the whole relay):
//
//	relay/frame     RelayMessageFrame codec: sealed Frame type, Encode/Decode/Validate in the
//	                reference's check order, 256 KiB message cap, ErrNonBinary. No I/O, no
//	                goroutines.
//	relay/mux       owns one frame connection: stream table, read loop and single writer,
//	                per-frame rules, bounded queues, resets, the handshake failure budget.
//	relay/wsconn    coder/websocket adapter (binary only, read limit, ping/pong liveness,
//	                dial with backoff); the only relay package that imports a websocket
//	                library.
//	relay/relaytest in-memory frame connections for tests (imported only by _test.go files).
//
// Above the relay sits noise/channel (handshake bytes and ordered records) and then the
// JSON-RPC executor; below it the websocket. The relay never looks inside handshake payloads
// or records: it imports none of noise, executor, registry, sandbox or encoding/json.
//
// Released wire behaviour (codex exec-server 0.169.0 and 0.171.0) is the only behaviour: data
// frames carry the channel's record seq (from 0) with segment_count 1, ack and ack_bits 0, no
// trace fields; the relay retransmits and acknowledges nothing, because the websocket below
// is already reliable and ordered; resets always carry "noise_relay_protocol_error"; resume,
// ack_frame and heartbeat frames are accepted and ignored. Record order is the business of
// noise/channel, above: it drops duplicate and stale records and reorders within a 64-record /
// 1 MiB window before decrypting.
package relay
