// Package relay is the root of the rendezvous relay stack of the remote executor. It holds no
// code; it describes the layers below it.
//
// The relay carries opaque bytes between the executor (Noise responder) and harnesses (Noise
// initiators) over websockets to a rendezvous service (spec/relay-noise.md §1). One physical
// socket carries many streams, each keyed by the harness-chosen stream_id. Every websocket
// message is binary and holds exactly one protobuf RelayMessageFrame (schema
// proto/codex/exec_server/relay/v1/relay.proto).
//
// Layers, bottom up:
//
//	relay/frame     RelayMessageFrame codec: sealed Frame type, Encode/Decode/Validate in the
//	                reference's check order, 256 KiB message cap. No I/O, no goroutines.
//	relay/reliable  per-stream sequencing and the 64-record / 1 MiB reorder window (pure).
//	relay/mux       owns one frame connection: stream table, read/write loops, resets.
//	relay/wsconn    coder/websocket adapter (binary only, read limit, ping/pong liveness);
//	                the only relay package that imports a websocket library.
//	relay/relaytest in-memory frame connections for tests.
//
// Above the relay sits noise/channel (handshake bytes and ordered records) and then the
// JSON-RPC executor; below it the websocket. The relay never looks inside handshake payloads
// or records: it imports none of noise, executor, registry, sandbox or encoding/json.
//
// Released wire behaviour (codex exec-server 0.169.0) is the default everywhere: seq from 0,
// ack/ack_bits 0, no retransmission, no trace fields, resets always carry
// "noise_relay_protocol_error".
package relay
