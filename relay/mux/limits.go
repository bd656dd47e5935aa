package mux

import "time"

// Wire constants: values of the released executor (codex exec-server 0.169.0) that a peer can
// observe.
const (
	// MaxStreams is the default number of authenticated streams per physical socket; further
	// handshakes are reset without being charged (spec/relay-noise.md §9, reference).
	MaxStreams = 128

	// MaxPending is the default number of handshakes awaiting registry validation at once;
	// further handshakes are reset without being charged (spec/relay-noise.md §9, reference).
	MaxPending = 32

	// FailureBudget is the number of charged handshake failures per physical socket that
	// starts a cooldown (spec/relay-noise.md §12.2, observed: the 8th failure pauses).
	FailureBudget = 8

	// Cooldown is how long new handshakes are reset without a registry call after the budget
	// is spent (spec/relay-noise.md §12.2, observed: 10 s; the socket stays open).
	Cooldown = 10 * time.Second

	// OutboundQueue is the capacity of the socket's single outbound frame queue, in frames
	// (spec/relay-noise.md §9, §12.3: 128 frames, one writer task).
	OutboundQueue = 128

	// ResetReason is the reason on every reset the executor sends (spec/relay-noise.md §16.12).
	ResetReason = "noise_relay_protocol_error"
)

// Implementation constants (our choice).
const (
	// dropWarnBurst and dropWarnPerSecond rate-limit the per-frame drop warnings of one
	// socket (warnlimit.go): a burst of 100 keeps every warning of an ordinary incident
	// (and of the reference-warning differential test, ~30 frames) while a garbage flood
	// logs at most 10 lines a second plus a count of what was suppressed.
	dropWarnBurst     = 100
	dropWarnPerSecond = 10

	// InboundQueuePackets and InboundQueueBytes bound one stream's queue of received records
	// that its reader has not taken yet. The reference decrypts in its read loop and queues
	// up to 128 decoded JSON-RPC messages per stream; we queue ciphertext records instead
	// (the relay never decrypts), so the bound is sized to hold one maximal 64 MiB message
	// (1093 records of 61456 bytes) with room to spare. Overflow resets the stream (spec
	// §12.1: full inbound queue → remove stream, reset); the read loop never blocks.
	InboundQueuePackets = 4096
	InboundQueueBytes   = 72 << 20
)
