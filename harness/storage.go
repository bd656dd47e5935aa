package harness

import (
	"math/bits"
	"sync"
	"sync/atomic"
)

// Storage a consumer may hand back (issue 16). Streaming output through a relay, the
// two large allocations per process/output (the ~350 KB message and the 256 KiB decoded
// chunk), their zeroing and the collections they caused were about a fifth of a receiving
// harness's CPU (docs/bench.md, relay_stream). A consumer that opts in (ProcessEvents.Take)
// hands both back instead: the message right after decoding it, the chunk with
// ProcessEvent.Release once written. Consumers that do not opt in see no difference.

// messageReleaser is a MessageConn whose messages may be handed back once consumed (the
// Noise channel of a relay stream pools the buffers of large messages).
type messageReleaser interface {
	ReleaseMessage(msg []byte)
}

// msgStorage is one pooled buffer and how to hand it back. Copies of the Notification or
// ProcessEvent holding it share it, so releasing twice is harmless: only the first
// release hands the buffer back.
type msgStorage struct {
	buf     []byte
	release func([]byte)
	done    atomic.Bool
}

// free hands the buffer back, once. A nil storage is a no-op.
func (s *msgStorage) free() {
	if s != nil && s.done.CompareAndSwap(false, true) {
		s.release(s.buf)
	}
}

// Decoded chunks of chunkMinPooled bytes and more come from pools of power-of-two sizes up
// to chunkMaxPooled; smaller ones are cheap to allocate, larger ones are rare.
const (
	chunkMinPooled = 16 << 10
	chunkMaxPooled = 1 << 20
	chunkMinShift  = 14 // log2(chunkMinPooled)
	chunkClasses   = 7  // 16 KiB … 1 MiB
)

var _ = [1]struct{}{}[chunkMinPooled-1<<chunkMinShift+chunkMaxPooled-chunkMinPooled<<(chunkClasses-1)]

var chunkPools [chunkClasses]sync.Pool // *[]byte of cap chunkMinPooled << class

// chunkClass returns the pool class of a chunk of n bytes, or -1 when n is not pooled.
func chunkClass(n int) int {
	if n < chunkMinPooled || n > chunkMaxPooled {
		return -1
	}
	return bits.Len(uint(n-1)) - chunkMinShift
}

// getChunk returns a buffer of length n: from a pool when n is pooled (with the
// storage that hands it back), otherwise freshly allocated (storage nil).
func getChunk(n int) ([]byte, *msgStorage) {
	c := chunkClass(n)
	if c < 0 {
		return make([]byte, n), nil
	}
	var b []byte
	if bp, ok := chunkPools[c].Get().(*[]byte); ok {
		b = (*bp)[:n]
	} else {
		b = make([]byte, n, chunkMinPooled<<c)
	}
	return b, &msgStorage{buf: b, release: putChunk}
}

// putChunk returns a buffer getChunk made to its pool.
func putChunk(b []byte) {
	c := chunkClass(cap(b))
	if c < 0 || cap(b) != chunkMinPooled<<c {
		return
	}
	b = b[:0]
	chunkPools[c].Put(&b)
}
