package channel

import "github.com/execlab/executor/noise"

// Wire constants (spec/relay-noise.md; values fixed by the reference).
const (
	// RecordPlaintextLen is the most plaintext one record carries, in bytes (§7,
	// NOISE_RECORD_PLAINTEXT_LEN = 61440).
	RecordPlaintextLen = 61440
	// MaxRecordLen is the largest record ciphertext, in bytes (61456).
	MaxRecordLen = RecordPlaintextLen + noise.TagLen
	// LengthPrefixLen is the big-endian u32 before each message, in bytes (§7).
	LengthPrefixLen = 4
	// MaxMessageLen is the largest JSON-RPC message, in bytes (§7, §9:
	// MAX_NOISE_JSONRPC_MESSAGE_LEN = 64 MiB). 0 is invalid.
	MaxMessageLen = 64 << 20
	// MaxReassemblyLen bounds the inbound reassembly buffer, in bytes (§7: 4 + 64 MiB).
	MaxReassemblyLen = LengthPrefixLen + MaxMessageLen

	// ReorderWindow is the largest seq distance ahead of the next expected record that
	// is buffered, in records (§8: distance 64 buffered, 65 is an error).
	ReorderWindow = 64
	// MaxPendingBytes bounds the ciphertext held in the reorder buffer, in bytes
	// (§8: 1 MiB; 17 full records fit, the 18th fails).
	MaxPendingBytes = 1 << 20

	// MaxAuthorizationLen is the largest harness authorization accepted in message 1,
	// in bytes; it must also be UTF-8 (§6: 4096 accepted, 4097 reset).
	MaxAuthorizationLen = 4096

	// RejectedPayload is the message-2 payload telling the harness that the executor's
	// registry credentials were rejected (§5.7, registry 401).
	RejectedPayload = "codex-registry-authentication-rejected/v1"

	// maxSeq is never used as a seq: the reference's sender fails when the successor of
	// its next seq would overflow u32 (§8, "never wraps").
	maxSeq = ^uint32(0)
)
