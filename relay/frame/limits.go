package frame

// Wire constants, fixed by the reference (codex exec-server 0.169.0).
const (
	// Version is the only accepted RelayMessageFrame.version (RELAY_MESSAGE_FRAME_VERSION;
	// spec/relay-noise.md §2.1, §3 check 1).
	Version = 1

	// MaxMessageSize is the largest websocket message, and so the largest encoded frame, in
	// bytes: 256 KiB (spec/relay-noise.md §9; a 300 KiB message makes the executor drop its
	// socket).
	MaxMessageSize = 256 << 10

	// DataSegmentIndex and DataSegmentCount are the only values released peers put in, and
	// accept from, RelayData (spec/relay-noise.md §2.1, §3 check 3). Fragmentation lives in
	// the 4-byte length prefix inside the Noise records instead.
	DataSegmentIndex = 0
	DataSegmentCount = 1

	// ResetReasonProtocolError is the reason the executor puts on every reset, including a
	// normal stream end (spec/relay-noise.md §2.1, §16 item 12).
	ResetReasonProtocolError = "noise_relay_protocol_error"
)

// Protobuf field numbers of proto/codex/exec_server/relay/v1/relay.proto (wire).
const (
	fieldVersion     = 1  // RelayMessageFrame.version, uint32
	fieldStreamID    = 2  // RelayMessageFrame.stream_id, string
	fieldAck         = 3  // RelayMessageFrame.ack, uint32
	fieldAckBits     = 4  // RelayMessageFrame.ack_bits, uint32
	fieldData        = 5  // oneof body: RelayData
	fieldAckFrame    = 6  // oneof body: RelayAck
	fieldResume      = 7  // oneof body: RelayResume
	fieldReset       = 8  // oneof body: RelayReset
	fieldHeartbeat   = 9  // oneof body: RelayHeartbeat
	fieldHandshake   = 10 // oneof body: RelayHandshake
	fieldTraceparent = 11 // optional string; Frame.Traceparent, emitted only when non-empty
	fieldTracestate  = 12 // optional string; checked and discarded on decode, never emitted
	// fieldFeatures is OUR extension, not in the reference schema: a uint32 bitmask of relay
	// features, set only on handshake frames by peers that support them (docs/reliability.md
	// §8, docs/protocol-extensions.md). Released decoders skip it as an unknown field (spec
	// §2.2); the number is far above the reference's so a future upstream field cannot
	// collide with it by accident.
	fieldFeatures = 100

	fieldDataSeq          = 1 // RelayData.seq, uint32
	fieldDataSegmentIndex = 2 // RelayData.segment_index, uint32
	fieldDataSegmentCount = 3 // RelayData.segment_count, uint32
	fieldDataPayload      = 4 // RelayData.payload, bytes

	fieldResumeNextSeq    = 1 // RelayResume.next_seq, uint32
	fieldResetReason      = 1 // RelayReset.reason, string
	fieldHandshakePayload = 1 // RelayHandshake.payload, bytes
)

// Relay feature bits of Frame.Features (field 100, our extension; docs/reliability.md §8).
const (
	// FeatureARQ (bit 0) is per-stream acknowledgement and retransmission, ARQ v1
	// (relay/arq): offered by our harness on message 1's frame, accepted by our executor on
	// message 2's frame; used only when both frames carry it.
	FeatureARQ uint32 = 1 << 0
)

// Implementation limits (our choice).
const (
	// MaxStreamIDLen is the longest stream_id Validate accepts, in bytes: 1 KiB. The reference
	// imposes no limit; spec/relay-noise.md §3 asks the Go executor to drop longer ids (real
	// harnesses send 36-byte UUIDs).
	MaxStreamIDLen = 1 << 10
)
