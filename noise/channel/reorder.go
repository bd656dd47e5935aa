package channel

import "sync"

// reorderBuffer restores record order before decryption (spec/relay-noise.md §8):
//
//	seq <  next                 stale: dropped silently
//	seq == next                 released, with every contiguous buffered successor
//	next < seq ≤ next+64        buffered; a second copy of a buffered seq is dropped
//	                            (first copy wins)
//	seq >  next+64              ErrReorderWindow
//	pending bytes > 1 MiB       ErrPendingFull
//
// Overflow policy: error (the stream is reset by the caller); nothing is dropped except
// duplicates and stale records. Bounds: ReorderWindow records and MaxPendingBytes of
// ciphertext. Pure: no I/O, no goroutines, no decryption. After an error the caller
// must discard the buffer. Not safe for concurrent use.
type reorderBuffer struct {
	next uint64 // next seq to release; uint64 so releasing 2^32-1 cannot wrap
	// held buffers records out of order; nil while pendingCount is 0, so a stream whose
	// records arrive in order (every idle stream, every ARQ stream) holds no slot array.
	held         *reorderSlots
	pendingBytes int
	pendingCount int
}

// reorderSlots: slot i holds seq s with s%ReorderWindow == i when present[i].
type reorderSlots struct {
	slots   [ReorderWindow][]byte
	present [ReorderWindow]bool
}

// slotsPool recycles the slot arrays of repaired gaps (push does not allocate).
var slotsPool = sync.Pool{New: func() any { return new(reorderSlots) }}

// release returns the (cleared) slot array to slotsPool.
func (r *reorderBuffer) release() {
	if r.held != nil {
		slotsPool.Put(r.held)
		r.held = nil
	}
}

// push accepts the record seq with ciphertext payload (retained, not copied) and
// appends the records that became deliverable, in seq order, to ready.
func (r *reorderBuffer) push(ready [][]byte, seq uint32, payload []byte) ([][]byte, error) {
	s := uint64(seq)
	switch {
	case s < r.next:
		return ready, nil
	case s == r.next:
		ready = append(ready, payload)
		r.next++
		return r.drain(ready), nil
	case s-r.next > ReorderWindow:
		return ready, ErrReorderWindow
	}
	i := s % ReorderWindow
	if r.held == nil {
		r.held = slotsPool.Get().(*reorderSlots)
	}
	if r.held.present[i] {
		return ready, nil // duplicate of a buffered record: first copy wins
	}
	if r.pendingBytes+len(payload) > MaxPendingBytes {
		return ready, ErrPendingFull
	}
	r.held.slots[i], r.held.present[i] = payload, true
	r.pendingBytes += len(payload)
	r.pendingCount++
	return ready, nil
}

func (r *reorderBuffer) drain(ready [][]byte) [][]byte {
	for r.pendingCount > 0 {
		i := r.next % ReorderWindow
		if !r.held.present[i] {
			break
		}
		ready = append(ready, r.held.slots[i])
		r.pendingBytes -= len(r.held.slots[i])
		r.pendingCount--
		r.held.slots[i], r.held.present[i] = nil, false
		r.next++
	}
	if r.pendingCount == 0 {
		r.release() // the gap is repaired
	}
	return ready
}

// reset drops every buffered record.
func (r *reorderBuffer) reset() {
	if r.held != nil {
		clear(r.held.slots[:])
		clear(r.held.present[:])
		r.release()
	}
	r.pendingBytes, r.pendingCount = 0, 0
}
