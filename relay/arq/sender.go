package arq

import (
	"sync"
	"time"
)

// Resend is one record to send again, byte for byte.
type Resend struct {
	Seq     uint32
	Payload []byte
}

// record is one retained record. A selectively acknowledged record keeps its slot (the
// window is counted from the oldest unacknowledged seq) but no longer its payload.
type record struct {
	payload  []byte
	lastSent time.Time
	sends    int  // 1 = sent once (an RTT sample is valid); more = resent
	acked    bool // selectively acknowledged (ack_bits)
}

// Sender is the sending half of one stream direction: it retains records until they are
// acknowledged and decides when to resend them (package doc). The zero value is ready; the
// first Sent fixes the starting seq. Not safe for concurrent use.
type Sender struct {
	// ring holds seq s in ring[s%Window] while base <= s < next; nil while nothing is
	// retained (taken from ringPool by Sent, returned cleared when the window empties), so
	// an idle stream holds no window.
	ring    *[Window]record
	base    uint64 // oldest retained seq (= next when nothing is retained)
	next    uint64 // seq the next Sent must carry
	started bool
	bytes   int // payload bytes retained (selectively acknowledged ones excluded)

	highSack uint64 // 1 + highest seq acknowledged selectively (0: none)

	srtt, rttvar time.Duration
	hasRTT       bool
	rto          time.Duration // current timeout including back-off; 0 = InitialRTO
}

// ringPool recycles the windows of Senders that emptied.
var ringPool = sync.Pool{New: func() any { return new([Window]record) }}

// releaseRing returns the (cleared) window once nothing is retained.
func (s *Sender) releaseRing() {
	if s.base == s.next && s.ring != nil {
		ringPool.Put(s.ring)
		s.ring = nil
	}
}

// Room reports whether a record of n bytes fits the window. A record alone always fits, so
// an oversized one cannot deadlock the stream.
func (s *Sender) Room(n int) bool {
	count := int(s.next - s.base)
	if count == 0 {
		return true
	}
	return count < Window && s.bytes+n <= WindowBytes
}

// Retained returns the number of records and payload bytes held unacknowledged.
func (s *Sender) Retained() (records, bytes int) { return int(s.next - s.base), s.bytes }

// Sent records that the record seq (payload retained, not copied: the caller must not
// modify it) was sent at now. Seqs must be consecutive (ErrSeqOrder) and Room(len(payload))
// must hold (ErrWindowFull).
func (s *Sender) Sent(seq uint32, payload []byte, now time.Time) error {
	if !s.started {
		s.base, s.next, s.started = uint64(seq), uint64(seq), true
	}
	if uint64(seq) != s.next {
		return ErrSeqOrder
	}
	if !s.Room(len(payload)) {
		return ErrWindowFull
	}
	if s.ring == nil {
		s.ring = ringPool.Get().(*[Window]record)
	}
	s.ring[seq%Window] = record{payload: payload, lastSent: now, sends: 1}
	s.bytes += len(payload)
	s.next++
	return nil
}

// OnAck applies a peer's ack and ack_bits (package doc) received at now. It reports whether
// any retained record was released (the window opened). Stale acks are harmless; an ack of
// a seq never sent is ErrAckBeyondSent and leaves the Sender unchanged.
func (s *Sender) OnAck(ack, bits uint32, now time.Time) (progress bool, err error) {
	_, progress, err = s.Ack(nil, ack, bits, now)
	return progress, err
}

// Ack is OnAck that also appends to released the payloads the Sender no longer retains
// (each exactly once: acknowledged cumulatively or selectively for the first time), so the
// driver can reuse their buffers once nothing else reads them.
func (s *Sender) Ack(released [][]byte, ack, bits uint32, now time.Time) (_ [][]byte, progress bool, err error) {
	a := uint64(ack)
	if a > s.next || (bits != 0 && a+1+uint64(highBit(bits)) >= s.next) {
		return released, false, ErrAckBeyondSent
	}
	var sample time.Duration
	for s.base < a {
		r := &s.ring[s.base%Window]
		if !r.acked {
			if r.sends == 1 {
				sample = now.Sub(r.lastSent)
			}
			s.bytes -= len(r.payload)
			released = append(released, r.payload)
			progress = true
		}
		*r = record{}
		s.base++
	}
	for i := 0; bits != 0; i, bits = i+1, bits>>1 {
		seq := a + 1 + uint64(i)
		if bits&1 == 0 || seq < s.base {
			continue
		}
		r := &s.ring[seq%Window]
		if r.acked {
			continue
		}
		if r.sends == 1 {
			sample = now.Sub(r.lastSent)
		}
		s.bytes -= len(r.payload)
		released = append(released, r.payload)
		r.payload, r.acked = nil, true
		progress = true
		s.highSack = max(s.highSack, seq+1)
	}
	if progress {
		if sample > 0 || s.hasRTT {
			s.updateRTT(sample)
		}
		s.rto = s.baseRTO() // progress ends the back-off
	}
	s.releaseRing()
	return released, progress, nil
}

// Drain appends to dst the payloads of every retained record not yet acknowledged and
// forgets them all (the stream ended; nothing will be resent).
func (s *Sender) Drain(dst [][]byte) [][]byte {
	for ; s.base < s.next; s.base++ {
		r := &s.ring[s.base%Window]
		if !r.acked {
			dst = append(dst, r.payload)
		}
		*r = record{}
	}
	s.bytes = 0
	s.releaseRing()
	return dst
}

// highBit returns the index of the highest set bit of a non-zero b.
func highBit(b uint32) int {
	n := -1
	for ; b != 0; b >>= 1 {
		n++
	}
	return n
}

// updateRTT feeds one sample to the RFC 6298 estimator (a zero sample only recomputes).
func (s *Sender) updateRTT(r time.Duration) {
	if r <= 0 {
		return
	}
	if !s.hasRTT {
		s.srtt, s.rttvar, s.hasRTT = r, r/2, true
		return
	}
	d := s.srtt - r
	if d < 0 {
		d = -d
	}
	s.rttvar = (3*s.rttvar + d) / 4
	s.srtt = (7*s.srtt + r) / 8
}

// baseRTO is the timeout without back-off: srtt + 4·rttvar (at least 1 ms), clamped.
func (s *Sender) baseRTO() time.Duration {
	if !s.hasRTT {
		return InitialRTO
	}
	return min(max(s.srtt+max(4*s.rttvar, time.Millisecond), MinRTO), MaxRTO)
}

// RTO returns the current retransmission timeout, back-off included.
func (s *Sender) RTO() time.Duration {
	if s.rto == 0 {
		return s.baseRTO()
	}
	return s.rto
}

// Due appends to dst the records to resend at now and marks them sent: missing records
// FastThreshold below the highest selectively acknowledged one (at once the first time,
// then once per RTO), and the oldest unacknowledged record once its RTO has passed, which
// doubles the RTO (up to MaxRTO) until the next progress.
func (s *Sender) Due(dst []Resend, now time.Time) []Resend {
	rto := s.RTO()
	timedOut := false
	first := s.firstUnacked()
	for seq := first; seq < s.next; seq++ {
		r := &s.ring[seq%Window]
		if r.acked {
			continue
		}
		expired := now.Sub(r.lastSent) >= rto
		fast := seq+FastThreshold < s.highSack && (r.sends == 1 || expired)
		oldest := seq == first && expired
		if !fast && !oldest {
			continue
		}
		if oldest && !fast {
			timedOut = true
		}
		r.lastSent = now
		r.sends++
		dst = append(dst, Resend{Seq: uint32(seq), Payload: r.payload})
	}
	if timedOut {
		s.rto = min(2*rto, MaxRTO)
	}
	return dst
}

// firstUnacked returns the oldest seq neither cumulatively nor selectively acknowledged
// (next when there is none).
func (s *Sender) firstUnacked() uint64 {
	for seq := s.base; seq < s.next; seq++ {
		if !s.ring[seq%Window].acked {
			return seq
		}
	}
	return s.next
}

// Deadline returns when Due next has something to resend (false: nothing retained). It
// may be in the past.
func (s *Sender) Deadline() (time.Time, bool) {
	rto := s.RTO()
	var at time.Time
	found := false
	first := s.firstUnacked()
	for seq := first; seq < s.next; seq++ {
		r := &s.ring[seq%Window]
		if r.acked || (seq != first && seq+FastThreshold >= s.highSack) {
			continue
		}
		t := r.lastSent.Add(rto)
		if seq+FastThreshold < s.highSack && r.sends == 1 {
			t = r.lastSent // fast resend due at once
		}
		if !found || t.Before(at) {
			at, found = t, true
		}
	}
	return at, found
}
