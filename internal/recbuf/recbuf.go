package recbuf

import (
	"sync"
	"sync/atomic"
)

// Cap is the capacity of a pooled buffer: the largest record ciphertext of the Noise relay
// channel (61440 bytes of plaintext plus the 16-byte tag; noise/channel checks it matches).
const Cap = 61456

var (
	pool   = sync.Pool{New: func() any { return new([Cap]byte) }}
	poison atomic.Bool
)

// Get returns an empty buffer of capacity Cap. Its previous contents are not cleared.
func Get() []byte { return pool.Get().(*[Cap]byte)[:0] }

// Put returns b to the pool; the caller must not use b (or any slice of it) afterwards. A
// buffer whose capacity is not Cap is ignored.
func Put(b []byte) {
	if cap(b) != Cap {
		return
	}
	a := (*[Cap]byte)(b[:Cap])
	if poison.Load() {
		for i := range a {
			a[i] = 0xEE
		}
	}
	pool.Put(a)
}

// SetPoison makes Put overwrite every buffer it takes (0xEE bytes), for tests that prove no
// buffer is returned while it can still be read. It is off by default.
func SetPoison(on bool) { poison.Store(on) }
