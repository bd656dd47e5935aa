// Package recbuf pools the buffers of sealed Noise relay records (≤ Cap bytes each), so the
// sender of a bulk stream does not allocate and zero a fresh ~60 KB buffer per record.
//
// Layer: a leaf under noise/channel (which seals each record into Get()) and relay/mux
// (which returns the record with Put once nothing can read it any more: after its frame is
// encoded on a released stream, or when relay ARQ v1 reports it acknowledged and no resend
// of it is queued). Neither knows the other; the contract between them is ownership: a
// record's payload handed to relay/mux belongs to the Mux, which is the only one to Put it.
//
// Invariant (the caller's): a buffer is Put exactly once, after its last reader is done; a
// buffer Put while something can still read it would send another record's bytes. Tests
// check this with SetPoison, which overwrites every buffer as it is Put.
//
// Limits: the pool is a sync.Pool, so idle buffers are dropped by the garbage collector
// (within two cycles) and an idle stream pins none; buffers in use are bounded by what the
// layers above hold (relay ARQ's window, the Mux's outbound queue). A buffer of another
// capacity is ignored by Put (left to the garbage collector).
package recbuf
