package channel

import "sync"

// Message buffers for messages that span records (issue 16). A process/output of a
// 256 KiB chunk is a ~350 KB message: allocated fresh for each one, the allocation, its
// zeroing and the collections it caused were about a fifth of a receiving harness's CPU
// (docs/bench.md, relay_stream). Such a message is reassembled into a buffer from a
// pool of k·RecordPlaintextLen bytes, k = 1…spanClasses, which a reader that is done with
// the message hands back with ReleaseMessage. Releasing is optional: an unreleased
// buffer is collected like any other.
//
// A message wholly inside one record aliases that record's storage with its capacity
// capped at its length, which is almost never a class size, so ReleaseMessage ignores
// it; when it is one (a 61,440-byte message whose prefix ended the record before), that
// region belongs to the message alone, so reusing it is just as safe. Larger messages
// (over initialSpanCap) keep growing by append, as before.
//
// Pooled buffers are not zeroed: like memory the collector frees, a reused buffer holds
// an earlier message's plaintext until overwritten, in this process only.

// spanClasses is the number of pool size classes, one per record count up to
// initialSpanCap.
const spanClasses = initialSpanCap / RecordPlaintextLen

var spanPools [spanClasses]sync.Pool // class k-1 holds *[]byte of cap k·RecordPlaintextLen

// getSpan returns an empty buffer with room for want bytes: pooled when want fits a
// class, otherwise allocated as before (at most initialSpanCap, grown by append).
func getSpan(want int) []byte {
	k := (want + RecordPlaintextLen - 1) / RecordPlaintextLen
	if k < 1 || k > spanClasses {
		return make([]byte, 0, min(want, initialSpanCap))
	}
	if bp, ok := spanPools[k-1].Get().(*[]byte); ok {
		return (*bp)[:0]
	}
	return make([]byte, 0, k*RecordPlaintextLen)
}

// ReleaseMessage hands back a message ReadMessage returned, once the caller and everyone
// it passed the message to are done with it: a later message (of any Conn) may be
// reassembled into its storage. Call it at most once per message, and do not use the
// message or anything aliasing it afterwards. Messages not held in a pooled buffer are
// left to the collector.
func ReleaseMessage(msg []byte) {
	c := cap(msg)
	k := c / RecordPlaintextLen
	if c == 0 || c%RecordPlaintextLen != 0 || k > spanClasses {
		return
	}
	msg = msg[:0]
	spanPools[k-1].Put(&msg)
}
