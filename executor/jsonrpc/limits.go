package jsonrpc

// Wire limits fixed by the reference (spec/jsonrpc.md).
const (
	// MaxValues is the per-message JSON value budget (§1.3): 256 × 1024 values.
	MaxValues = 256 * 1024
)

// Implementation limits (our choice unless noted).
const (
	// OutboundQueue is the per-connection outbound message queue (§1.6: 128 in the
	// reference). Responses and process notifications block while it is full.
	OutboundQueue = 128
	// InboundQueue bounds decoded messages waiting for dispatch; the read loop blocks
	// (back-pressure on the transport) while it is full.
	InboundQueue = 128
)
