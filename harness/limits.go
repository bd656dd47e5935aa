package harness

// Wire constants (fixed by the reference, spec/jsonrpc.md).
const (
	// firstRequestID is the id of the first request on a connection; ids then count up
	// (spec/jsonrpc.md "How to use": integer ids 1, 2, 3, …).
	firstRequestID = 1
	// malformedReplyID is the id the server uses for its reply to a message it could not
	// parse (spec/jsonrpc.md §1.4). It never matches a pending call.
	malformedReplyID = -1
)

// Implementation constants (our choice).
const (
	// DefaultNotificationBuffer is the capacity, in notifications, of the channel returned
	// by Client.Notifications. 1024 covers 8 MiB of 8 KiB process/output chunks in flight,
	// which keeps readLoop from stalling on consumer jitter.
	DefaultNotificationBuffer = 1024

	// DefaultNotificationBytes bounds the notifications queued for the consumer, in bytes
	// of their params (base64 output counts 4/3 of its decoded size); the read loop stops
	// reading while it is reached (one notification always fits an empty queue).
	DefaultNotificationBytes = 8 << 20

	// ackEveryBytes and ackEveryEvents: an outputAck process is acknowledged at the latest
	// after this many consumed notification bytes or events, a quarter of the executor's
	// default window (1 MiB of output, about 1.4 MiB as base64; 1,024 events), so its
	// window never runs dry while the consumer keeps up.
	ackEveryBytes  = 256 << 10
	ackEveryEvents = 256
	// ackEveryBytesFlowControlled is ackEveryBytes on a relay stream running ARQ v1, where
	// our executor's window is 6 MiB (executor/process DefaultFlowControlledOutputWindow):
	// 1 MiB of notifications (~768 KiB of output), under a quarter of that window and
	// under a full 2 MiB one too (ack.go), so liveness does not depend on which window
	// the executor uses; a quarter as many acks as ackEveryBytes.
	ackEveryBytesFlowControlled = 1 << 20

	// DefaultReadLimit is the largest inbound WebSocket message DialLocal accepts, in
	// bytes. The largest routine message is a full process/read (1 MiB retained output,
	// base64 plus framing, about 1.4 MiB); fs/readFile has no cap on the wire, so the
	// limit is generous. -1 in Options.ReadLimit disables it.
	DefaultReadLimit = 64 << 20
)
