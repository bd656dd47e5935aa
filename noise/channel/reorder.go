package channel

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
	next         uint64 // next seq to release; uint64 so releasing 2^32-1 cannot wrap
	slots        [ReorderWindow][]byte
	present      [ReorderWindow]bool // slot i holds seq s with s%ReorderWindow == i
	pendingBytes int
	pendingCount int
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
	if r.present[i] {
		return ready, nil // duplicate of a buffered record: first copy wins
	}
	if r.pendingBytes+len(payload) > MaxPendingBytes {
		return ready, ErrPendingFull
	}
	r.slots[i], r.present[i] = payload, true
	r.pendingBytes += len(payload)
	r.pendingCount++
	return ready, nil
}

func (r *reorderBuffer) drain(ready [][]byte) [][]byte {
	for r.pendingCount > 0 {
		i := r.next % ReorderWindow
		if !r.present[i] {
			break
		}
		ready = append(ready, r.slots[i])
		r.pendingBytes -= len(r.slots[i])
		r.pendingCount--
		r.slots[i], r.present[i] = nil, false
		r.next++
	}
	return ready
}

// reset drops every buffered record.
func (r *reorderBuffer) reset() {
	clear(r.slots[:])
	clear(r.present[:])
	r.pendingBytes, r.pendingCount = 0, 0
}
