package process

import (
	"sync"
	"sync/atomic"
)

// Pooled read buffers (issue 16). Once output flows, every pipe read fills most of a
// readBufferSize buffer and that buffer is retained as the chunk's data. Allocating a
// fresh 256 KiB buffer per read cost the executor, per GiB of output, a GiB of zeroing,
// the page faults of memory the heap had returned, and GC cycles (≈ 25 % of relay_cpu's
// profile with the ciphertext records, docs/bench.md). The buffers of full-size reads
// now come from a pool and go back to it once no one can read them again.
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

// readBuf is a pooled buffer of readBufferSize bytes and its reference count.
type readBuf struct {
	b      *[readBufferSize]byte
	refs   int  // guarded by the owning proc's mu
	shared bool // guarded by the owning proc's mu; handed to process/read: never pooled
}

// readBufPool holds unused *[readBufferSize]byte. Its overflow policy is sync.Pool's: it
// keeps what was put between collections and drops it after two, so an idle executor
// holds none.
var readBufPool = sync.Pool{New: func() any { return new([readBufferSize]byte) }}

// readBufReuses counts the buffers put back into readBufPool (tests read it through
// ReadBufReusesForTest to see that the reuse path ran).
var readBufReuses atomic.Int64

func getReadBuf() *[readBufferSize]byte { return readBufPool.Get().(*[readBufferSize]byte) }

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
		readBufPool.Put(r.b)
		readBufReuses.Add(1)
		r.b = nil
	}
}
