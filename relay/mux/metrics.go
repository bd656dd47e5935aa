package mux

import "time"

// Observer receives the mux's counts, for metrics (cmd/executor wires Prometheus to it;
// relay packages never import a metrics library). Every value passed is one of the
// constants below: no stream id ever reaches an Observer. Implementations must be safe for
// concurrent use, cheap and non-blocking: CooldownEntered is called with the mux's lock
// held, the others from the read loop or the writer.
type Observer interface {
	// FrameDropped is called once per inbound or outbound frame dropped by the per-frame
	// rules (the rate-limited warning may or may not have been logged).
	FrameDropped(reason string)
	// HandshakeRefused is called once per handshake the mux reset on its own.
	HandshakeRefused(reason string)
	// CooldownEntered is called when the failure budget is spent and handshakes pause.
	CooldownEntered()
	// Backpressure is called after a stream's record write waited for room in the
	// socket's outbound queue (a slow socket), with QueueOutbound and how long it waited.
	Backpressure(queue string, d time.Duration)
}

// QueueOutbound is the queue name passed to Observer.Backpressure: the socket's single
// outbound frame queue.
const QueueOutbound = "relay_outbound"

// Drop reasons passed to Observer.FrameDropped.
const (
	DropNonBinary   = "non_binary"   // a text websocket message
	DropMalformed   = "malformed"    // not a decodable relay frame
	DropInvalid     = "invalid"      // decoded, but failed frame validation
	DropUnknownBody = "unknown_body" // a body kind this version does not know
	DropUnencodable = "unencodable"  // an outbound frame that could not be encoded
)

// Refusal reasons passed to Observer.HandshakeRefused (the noise_reason of the debug
// diagnostic).
const (
	RefusedDuplicatePending = "duplicate_pending_stream"
	RefusedDuplicateActive  = "duplicate_active_stream"
	RefusedCooldown         = "cooldown"
	RefusedCapacity         = "capacity"
	RefusedEarlyData        = "early_data"
)

// nopObserver is the Observer of a nil Options.Observer.
type nopObserver struct{}

func (nopObserver) FrameDropped(string)     {}
func (nopObserver) HandshakeRefused(string) {}
func (nopObserver) CooldownEntered()        {}

func (nopObserver) Backpressure(string, time.Duration) {}
