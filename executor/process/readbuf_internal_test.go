package process

import "testing"

// A read buffer's cycle through the pump, the log and a notification (get, the log's
// and the send's references, both released) allocates nothing once the pool is warm:
// the pump's steady state costs no allocation per read for its buffer.
func TestReadBuf_CycleAllocatesNothing(t *testing.T) {
	for size := initialReadSize; size <= readBufferSize; size *= 2 {
		cycle := func() {
			r := getReadBuf(size)
			if len(r.b) != size {
				t.Fatalf("getReadBuf(%d) gave %d bytes", size, len(r.b))
			}
			r.retain() // the log
			r.retain() // the notification
			r.release()
			r.release() // evicted: back to the pool
		}
		cycle()
		if raceEnabled {
			continue // sync.Pool drops items at random under the race detector
		}
		if allocs := testing.AllocsPerRun(100, cycle); allocs != 0 {
			t.Errorf("size %d: %v allocations per cycle, want 0", size, allocs)
		}
	}
}

// A buffer handed to a process/read response is never pooled again, even once every
// reference is gone.
func TestReadBuf_SharedNeverReused(t *testing.T) {
	r := getReadBuf(initialReadSize)
	r.retain()
	r.shared = true
	before := readBufReuses.Load()
	r.release()
	if got := readBufReuses.Load() - before; got != 0 {
		t.Fatalf("a shared buffer was pooled (%d reuses)", got)
	}
}
