// Package arq is the per-stream acknowledgement and retransmission state machine of relay
// ARQ v1 (docs/reliability.md §8): a pure Sender that retains sealed records until they are
// acknowledged and says when to resend them, a pure Receiver that restores record order and
// produces the cumulative ack and the 32-bit selective ack_bits, the Endpoint that bundles
// both for a stream, and Timers, the one driver of an Endpoint's timers.
//
// Layer: beside relay/frame (it only uses the ack and ack_bits semantics of fields 3 and 4),
// below its users relay/mux (executor side) and relay/initiator (harness side), which own
// the sockets and goroutines; the timer driver both use is Timers. It knows nothing of
// Noise, frames or websockets: payloads are opaque ciphertext records, resent byte for byte
// (a record re-encrypted would burn a different Noise nonce), in the seq order the channel above assigned (per direction, from
// 0, consecutive; unchanged from the released protocol, spec/relay-noise.md §8).
//
// # Wire semantics (ARQ v1, negotiated by relay feature bit frame.FeatureARQ)
//
//	ack       number of records received in order from seq 0 = the next seq expected
//	          (0: nothing yet; every seq < ack was received)
//	ack_bits  bit i set: seq ack+1+i was received (out of order), i = 0…31
//
// Every data frame of an ARQ stream carries the sender's current ack and ack_bits; an
// ack_frame (empty body) carries them alone. Compared with the reference's unmerged PR
// #31457 the quantities are the same (its seqs start at 1 and its ack is the last seq
// received in order, which is the count received; ours start at 0 as the released
// protocol's do, so the count is the next seq expected) and ack 0 still means "nothing".
//
// # Sender
//
//   - Window: at most Window records and WindowBytes bytes retained (sent, not yet
//     acknowledged); Room reports whether one more fits, and the driver blocks its writer
//     until it does. Overflow policy: block (back-pressure), never drop.
//   - A record is released when the cumulative ack passes it or its ack_bits bit is set.
//   - Retransmission, byte-identical: fast, once FastThreshold later records were
//     acknowledged selectively (first time at once, then at most once per RTO); and on
//     timeout, for the oldest unacknowledged record, with exponential back-off from the RTO
//     (RFC 6298 estimator, clamped to MinRTO…MaxRTO; samples only from records sent once,
//     Karn's rule), reset by any progress.
//   - An ack for a seq never sent is a protocol error (ErrAckBeyondSent): the stream is
//     reset.
//
// # Receiver
//
//   - Records in [next, next+Window) are accepted; in order they are released at once with
//     their buffered successors, out of order they are buffered (at most Window records).
//     Stale and duplicate records are dropped. A record beyond the window is a protocol
//     error (ErrBeyondWindow): a conforming sender never sends it.
//   - Acks: due at once after a gap or a duplicate (the peer needs them to repair), after
//     AckEvery in-order records, or AckDelay after the first unacknowledged record.
//
// # Limits
//
// limits.go. Memory per stream and direction: ≤ WindowBytes retained by the sender, ≤
// Window records buffered by the receiver (the sender's window bounds their bytes). An idle
// stream holds neither slot array: the sender's window is taken from a pool on the first
// retained record and returned once all are acknowledged; the receiver's reorder buffer
// exists only while a gap is open.
//
// Buffer release: Sender.Ack (Endpoint.OnAckRelease) and Sender.Drain (Endpoint.Drain)
// hand back each retained payload exactly once, when it is no longer retained, so a driver
// can reuse its buffer; Endpoint.SetHold lets the driver take a reference, under the
// Endpoint's lock, on each record Poll is about to hand out for a resend, before an ack can
// release it. OnAck and the Sender's OnAck drop that information (the buffers go to the GC).
//
// Timers (timers.go) is the one timer driver, used by both sides of the relay: relay/mux
// (executor) and relay/initiator (harness). Built on Poll (one step) and SetWake (called
// when a deadline moved earlier), it runs a drive goroutine only while something is due and
// arms a time.AfterFunc timer only while a deadline is pending; its goroutines are counted
// in the owner's WaitGroup.
//
// Concurrency: Sender and Receiver are plain values used under the Endpoint's lock; time is
// an input (now), so every timer is testable without sleeping. Endpoint and Timers are safe
// for concurrent use; lock order: the owner's locks, then the Timers lock, then the
// Endpoint's (the Endpoint calls wake without its lock held).
package arq
