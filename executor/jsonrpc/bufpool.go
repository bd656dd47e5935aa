package jsonrpc

import (
	"math/bits"
	"sync"
)

// Encode buffers for large outbound messages (issue 16).
//
// A stdout stream encodes one message of up to ~350 KB per pipe read. Allocating each one
// fresh cost more than the encoding itself: the Go heap hands back freshly faulted pages
// for large objects and returns them to the OS between GC cycles, so every message paid
// page faults and zeroing in the kernel (profiled: ~25,000–50,000 minor faults per
// 256 MiB streamed, system time 2–4× the reference's). Large messages are therefore
// encoded into buffers from size-class pools and returned to them once written.
//
// Only values that state their encoded size (SizeHinter) use the pools, so a small reply
// never holds a large buffer while it waits in the outbound queue. A buffer is returned
// to its pool by the write loop once MessageConn.WriteMessage returned (which must not
// retain msg, see MessageConn). Bounds: buffers of minPooled … maxPooled bytes only, in
// power-of-two classes, held by sync.Pool, which the garbage collector empties when they
// go unused: an idle connection holds none.

// SizeHinter is implemented by wire types whose encoding can be large (byte payloads):
// JSONSizeHint returns an upper bound of len(AppendJSON(nil)), in bytes.
type SizeHinter interface {
	JSONSizeHint() int
}

const (
	// envelopeSlack covers the envelope around params or a result: method or id, member
	// names and braces, in bytes. Method names and ids are short; a longer one only costs
	// a growth of the buffer.
	envelopeSlack = 256
	// minPooled is the smallest pooled buffer, in bytes. Even 4–8 KiB messages (one small
	// pipe read each) churn the heap fast enough for the runtime to return and re-fault
	// their pages, so they are pooled too; smaller replies are rare and not hinted.
	minPooled = 4 << 10
	// maxPooled is the largest pooled buffer, in bytes: a 1 MiB fs/readBlock chunk in
	// base64 plus its envelope fits.
	maxPooled = 2 << 20
)

// minPooledShift is log2(minPooled); poolClasses the number of power-of-two classes from
// minPooled to maxPooled.
const (
	minPooledShift = 12
	poolClasses    = 10
)

var (
	_        = [1]struct{}{}[minPooled-1<<minPooledShift]          // minPooled == 1 << minPooledShift
	_        = [1]struct{}{}[maxPooled-minPooled<<(poolClasses-1)] // maxPooled is the last class
	bufPools [poolClasses]sync.Pool
)

// poolClass returns the pool index for a buffer of at least n bytes, or -1 when n is
// outside the pooled range.
func poolClass(n int) int {
	if n <= 0 || n > maxPooled {
		return -1
	}
	c := bits.Len(uint(n-1)) - minPooledShift
	return max(c, 0)
}

// getBuffer returns an empty buffer with room for hint bytes: pooled when hint is in the
// pooled range, else nil (append allocates as usual).
func getBuffer(hint int) []byte {
	c := poolClass(hint)
	if hint < minPooled || c < 0 {
		return nil
	}
	if p, ok := bufPools[c].Get().(*[]byte); ok {
		b := (*p)[:0]
		*p = nil
		headers.Put(p)
		return b
	}
	return make([]byte, 0, minPooled<<c)
}

// headers recycles the *[]byte boxes the pools hold, so that putting a buffer back does
// not allocate one each time.
var headers = sync.Pool{New: func() any { return new([]byte) }}

// putBuffer returns b to its pool when its capacity is exactly a pooled class (a buffer
// that outgrew its class, or never came from a pool, is left to the collector).
func putBuffer(b []byte) {
	n := cap(b)
	c := poolClass(n)
	if c < 0 || n != minPooled<<c {
		return
	}
	p := headers.Get().(*[]byte)
	*p = b[:0]
	bufPools[c].Put(p)
}

// sizeHint returns v's encoded size bound, or 0 when v does not say.
func sizeHint(v any) int {
	if h, ok := v.(SizeHinter); ok {
		return h.JSONSizeHint() + envelopeSlack
	}
	return 0
}
