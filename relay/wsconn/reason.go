package wsconn

// CloseReason says why a Conn ended. The values are the reference's disconnect reasons
// (spec/relay-noise.md §11, §14: noise_reason) and stay a small bounded set for log and
// metric labels.
type CloseReason uint8

// Close reasons. The first reason recorded wins.
const (
	ReasonNone          CloseReason = iota // still open
	ReasonPeerClose                        // the peer sent a close frame
	ReasonReadError                        // reading failed (EOF, reset, oversized message, protocol error)
	ReasonWriteError                       // a write failed or exceeded WriteTimeout
	ReasonPongTimeout                      // no Pong within PongTimeout of a Ping
	ReasonLocalShutdown                    // Close was called
)

var reasonNames = [...]string{
	ReasonNone:          "none",
	ReasonPeerClose:     "peer_close",
	ReasonReadError:     "read_error",
	ReasonWriteError:    "write_error",
	ReasonPongTimeout:   "pong_timeout",
	ReasonLocalShutdown: "local_shutdown",
}

// String returns the reference's snake_case name ("pong_timeout", …).
func (r CloseReason) String() string {
	if int(r) < len(reasonNames) {
		return reasonNames[r]
	}
	return "unknown"
}
