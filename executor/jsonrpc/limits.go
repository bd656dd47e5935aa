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

// Server→client requests and best-effort notifications (call.go; spec/network-proxy.md
// §6–§7). Wire behaviour observed on codex 0.171.0.
const (
	// MaxPendingCalls bounds the server→client requests awaiting a reply on one
	// connection (spec/network-proxy.md §6: 256; probed on 0.171.0 with 262 concurrent
	// network/policyRequest callbacks: ids 1…256 were sent, the other 6 were denied at
	// once without using an id). Call fails fast with ErrTooManyCalls beyond it.
	MaxPendingCalls = 256
	// BestEffortReserve is the number of outbound queue slots a best-effort notification
	// (the network/policyDecision audit) leaves free for replies and process
	// notifications: it is dropped when fewer would remain (spec/network-proxy.md §7:
	// "dropped when fewer than 16 outbound slots are free").
	BestEffortReserve = 16
	// BestEffortReserveBytes is the same reserve in the byte budget, in bytes: the share
	// of OutboundBytes that BestEffortReserve is of OutboundQueue (our choice: the
	// reference has no byte budget). 512 KiB.
	BestEffortReserveBytes = OutboundBytes * BestEffortReserve / OutboundQueue
)
