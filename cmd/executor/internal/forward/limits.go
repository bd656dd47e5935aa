package forward

import "time"

// Implementation limits (ours).
const (
	// DialTimeout bounds connecting to the target (TCP + WebSocket upgrade): a target
	// that is down or does not answer ends the harness stream after at most this long.
	DialTimeout = 10 * time.Second
	// MaxMessageBytes bounds one message read from the target: the same 64 MiB our own
	// listener accepts (cmd/executor/internal/serve.MaxMessageBytes).
	MaxMessageBytes = 64 << 20
)
