package chaos

import "time"

// Implementation constants (our choice; the chaos proxy has no wire constants of its own:
// it relays the rendezvous's websocket messages unchanged, spec/relay-noise.md §9).
const (
	// ReorderHold is how long a frame picked for reordering is held back, so the frames
	// read after it within that time overtake it. At loopback speed (about one 60 KiB
	// frame per millisecond) 10 ms moves a frame a few positions, well inside the relay's
	// reorder window of 64 frames (spec/relay-noise.md §9).
	ReorderHold = 10 * time.Millisecond

	// LineFrames bounds each direction's delay line, in frames: past it the reading side
	// blocks (back-pressure onto the sender's TCP), so memory stays bounded at about
	// LineFrames × 256 KiB per direction even under a long delay or stall.
	LineFrames = 256

	// LinkWriteTimeout bounds one websocket write of the proxy. The proxy is meant to be
	// transparent: liveness decisions belong to the endpoints, so it is far longer than any
	// stall it injects (a write waits behind a stall gate).
	LinkWriteTimeout = 30 * time.Minute

	// DialTimeout bounds the proxy's upstream TCP connect plus websocket upgrade.
	DialTimeout = 10 * time.Second

	// MaxSpecLength bounds one fault spec's text, in bytes (flags and control requests).
	MaxSpecLength = 1024

	// MaxFaults bounds the faults one Proxy holds (scheduled plus injected), so a control
	// client cannot grow its memory without bound.
	MaxFaults = 1024

	// MaxDuration bounds every duration in a fault spec.
	MaxDuration = 24 * time.Hour
)
