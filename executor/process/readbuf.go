package process

import (
	"math/bits"
	"sync"
	"sync/atomic"
)

// Pooled read buffers (issue 16). Once output flows, every pipe read fills at least half
// of its buffer and that buffer is retained as the chunk's data. Allocating a fresh
// buffer (up to 256 KiB) per read cost the executor, per GiB of output, a GiB of zeroing,
// the page faults of memory the heap had returned, and GC cycles (≈ 25 % of relay_cpu's
// profile with the ciphertext records, docs/bench.md). The read buffers
// now come from pools (one per size class: the pump's read size doubles after a full
// read and halves after a read that fills less than half, so a steady stream settles on
// the class its pauses fill) and go back once no one can read them again.
//
// Who holds a pooled buffer, each with a reference counted in readBuf.refs (guarded by
// the owning proc's mu, like the log that holds it):
//   - the output log, from push until the chunk is evicted (outputLog.evict);
//   - a notification being sent (emitOutput, routineSend) from when its event is picked
//     under p.mu until Notify returns: Notify encodes before it returns (jsonrpc.Notifier).
//
// A process/read response shares the chunk's bytes with the log and is encoded after
// p.mu is released, with no hook that says when: collect marks the buffer shared and it
// is never pooled again (the GC takes it). Chunks dropped with their process are left to
// the GC too. A pooled buffer is therefore never reused while anything can still read it.

// readBuf is a pooled read buffer of one size class (initialReadSize << i, up to
// readBufferSize) and its reference count. The pump reads into one; when the read is
// retained as is (at least half full, outputLog's compaction rule) the chunk keeps it.
type readBuf struct {
	b      []byte // len = cap = the class size
	refs   int    // guarded by the owning proc's mu
	shared bool   // guarded by the owning proc's mu; handed to process/read: never pooled
}

// readBufClasses is the number of size classes, initialReadSize … readBufferSize.
const readBufClasses = 6

var _ = [1]struct{}{}[initialReadSize<<(readBufClasses-1)-readBufferSize] // the classes end at readBufferSize

// readBufPools hold unused *readBuf, one pool per size class. Their overflow policy is
// sync.Pool's: they keep what was put between collections and drop it after two, so an
// idle executor holds none.
var readBufPools [readBufClasses]sync.Pool

// readBufReuses counts the buffers put back after being retained (tests read it through
// ReadBufReusesForTest to see that the reuse path ran).
var readBufReuses atomic.Int64

func readBufClass(size int) int { return bits.Len(uint(size/initialReadSize)) - 1 }

// getReadBuf returns an unreferenced buffer of size bytes (a class size).
func getReadBuf(size int) *readBuf {
	if v := readBufPools[readBufClass(size)].Get(); v != nil {
		r := v.(*readBuf)
		r.refs, r.shared = 0, false
		return r
	}
	return &readBuf{b: make([]byte, size)}
}

// putUnused pools a buffer no one references (the pump's current read buffer).
func (r *readBuf) putUnused() { readBufPools[readBufClass(len(r.b))].Put(r) }

// retain adds a reference. The owner's mu must be held.
func (r *readBuf) retain() {
	if r != nil {
		r.refs++
	}
}

// release drops a reference and pools the buffer once none is left and it was never
// shared. The owner's mu must be held.
func (r *readBuf) release() {
	if r == nil {
		return
	}
	r.refs--
	if r.refs == 0 && !r.shared {
		readBufReuses.Add(1)
		r.putUnused()
	}
}
