package arq

import "time"

// Wire constants of ARQ v1 (ours; both ends must agree, docs/reliability.md §8).
const (
	// Window is the most records a sender keeps unacknowledged, and the receiver's reorder
	// window, in records. 64 is the released reorder window (spec/relay-noise.md §8), so an
	// ARQ sender never sends what a released-style reorder buffer could not hold.
	Window = 64

	// AckBits is the width of the selective acknowledgement bitmap (frame field 4, uint32).
	AckBits = 32
)

// Implementation constants (our choice).
const (
	// WindowBytes bounds the ciphertext a sender retains unacknowledged, in bytes: 2 MiB,
	// the PR #31457 value; 34 full records (61456 B), about 2 ms of a 1 GB/s stream.
	WindowBytes = 2 << 20

	// MinRTO and MaxRTO clamp the retransmission timeout. 50 ms stays above the jitter of a
	// loaded loopback rendezvous; 2 s bounds the wait after repeated losses (the released
	// harness's recovery starts after longer outages anyway).
	MinRTO = 50 * time.Millisecond
	MaxRTO = 2 * time.Second

	// InitialRTO is the timeout before any RTT sample: 250 ms (a relay RTT over a WAN).
	InitialRTO = 250 * time.Millisecond

	// FastThreshold is how many later records must be acknowledged selectively before a
	// missing one is resent without waiting for the timeout (TCP's duplicate-ack threshold).
	FastThreshold = 3

	// AckEvery is how many in-order records a receiver takes before an ack is due at once;
	// AckDelay is the longest an ack waits otherwise. Both are far inside MinRTO, so a
	// delayed ack never causes a timeout resend.
	AckEvery = 4
	AckDelay = 5 * time.Millisecond
)
