package arq

import (
	"sync"
	"time"
)

// Receiver is the receiving half of one stream direction: it restores record order and
// keeps the ack state (package doc). The zero value expects seq 0 first. Not safe for
// concurrent use.
type Receiver struct {
	next  uint64   // next seq expected in order = the cumulative ack
	ro    *reorder // records buffered out of order; nil while count is 0 (idle streams)
	count int      // records buffered out of order

	unacked int       // records taken in order since the last ack was sent
	ackAt   time.Time // when a delayed ack falls due (zero: none pending)
	ackNow  bool      // an ack is due at once
}

// reorder is a Receiver's out-of-order buffer: seq s in slots[s%Window] when present.
type reorder struct {
	slots   [Window][]byte
	present [Window]bool
}

// reorderPool recycles the reorder buffers of repaired gaps.
var reorderPool = sync.Pool{New: func() any { return new(reorder) }}

// Receive takes the record seq (payload retained, not copied) arriving at now and appends
// the records that became deliverable, in seq order, to ready. Stale and duplicate records
// are dropped (and make an ack due: the peer resent them because it lacked one). A record
// Window or more ahead of the next expected one, or with the never-used seq 2^32-1, is
// ErrBeyondWindow; the Receiver is then unchanged.
func (r *Receiver) Receive(ready [][]byte, seq uint32, payload []byte, now time.Time) ([][]byte, error) {
	s := uint64(seq)
	switch {
	case s < r.next:
		r.ackNow = true
		return ready, nil
	case s-r.next >= Window || seq == ^uint32(0):
		return ready, ErrBeyondWindow
	case s > r.next:
		i := s % Window
		if r.ro == nil {
			r.ro = reorderPool.Get().(*reorder)
		}
		if !r.ro.present[i] {
			r.ro.slots[i], r.ro.present[i] = payload, true
			r.count++
		}
		r.ackNow = true // a gap or a duplicate: the sender needs to know at once
		return ready, nil
	}
	ready = append(ready, payload)
	r.next++
	r.unacked++
	filled := false
	for r.count > 0 {
		i := r.next % Window
		if !r.ro.present[i] {
			break
		}
		ready = append(ready, r.ro.slots[i])
		r.ro.slots[i], r.ro.present[i] = nil, false
		r.count--
		r.next++
		filled = true
	}
	if r.count == 0 && r.ro != nil {
		reorderPool.Put(r.ro) // the gap is repaired (slots cleared): an idle stream holds none
		r.ro = nil
	}
	switch {
	case filled || r.unacked >= AckEvery:
		r.ackNow = true // a repaired gap frees the sender's window at once
	case r.ackAt.IsZero():
		r.ackAt = now.Add(AckDelay)
	}
	return ready, nil
}

// Ack returns the current cumulative ack and ack_bits (package doc).
func (r *Receiver) Ack() (ack, bits uint32) {
	if r.count > 0 {
		for i := range uint64(AckBits) {
			s := r.next + 1 + i
			if s-r.next < Window && r.ro.present[s%Window] {
				bits |= 1 << i
			}
		}
	}
	return uint32(r.next), bits
}

// Buffered returns the number of records held out of order.
func (r *Receiver) Buffered() int { return r.count }

// AckSent records that a frame carrying Ack's values was sent (a data frame or an
// ack_frame): nothing is due until more records arrive.
func (r *Receiver) AckSent() {
	r.unacked, r.ackAt, r.ackNow = 0, time.Time{}, false
}

// AckDeadline returns when a standalone ack falls due (false: none pending). It may be in
// the past; an ack due at once returns the zero time.
func (r *Receiver) AckDeadline() (time.Time, bool) {
	if r.ackNow {
		return time.Time{}, true
	}
	return r.ackAt, !r.ackAt.IsZero()
}

// AckDue reports whether a standalone ack should be sent at now.
func (r *Receiver) AckDue(now time.Time) bool {
	at, ok := r.AckDeadline()
	return ok && !now.Before(at)
}
