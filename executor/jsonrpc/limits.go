package jsonrpc

// The JSON value budget and nesting limit of one message are wire limits of the decoder:
// jsonwire.MaxValues and jsonwire.MaxDepth.

// Implementation limits (our choice unless noted).
const (
	// OutboundQueue is the per-connection outbound message queue (§1.6: 128 in the
	// reference). Responses and process notifications block while it is full.
	OutboundQueue = 128
	// InboundQueue bounds decoded messages waiting for dispatch; the read loop blocks
	// (back-pressure on the transport) while it is full.
	InboundQueue = 128
	// InboundBytes bounds the raw bytes of the decoded messages waiting for dispatch
	// (our choice, issue 13: by count alone, 128 queued 16 MiB writes pinned over 1 GB).
	// The read loop waits beyond it; one larger message still passes alone, so the
	// transport's own message limit stays the only cap on a single message.
	InboundBytes = 16 << 20
	// OutboundBytes bounds the encoded bytes queued per connection (our choice: a few
	// 1 MiB body deltas in flight keep loopback streams at full speed while a streamed
	// 256 MiB body peaks at ~14 MiB RSS). Producers wait beyond it; one message larger
	// than the budget still passes alone.
	OutboundBytes = 4 << 20
)
