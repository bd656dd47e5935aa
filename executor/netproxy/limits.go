package netproxy

// Wire limits, fixed by the reference (spec/network-proxy.md).
const (
	// MaxCallbackProcessIDBytes bounds the processId of a process with policy callbacks
	// enabled, in bytes (§2.2 step 4; exactly 256 is accepted).
	MaxCallbackProcessIDBytes = 256
)
