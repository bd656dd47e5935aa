package arq_test

import (
	"errors"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/execlab/executor/relay/arq"
)

var t0 = time.Unix(1_000_000, 0)

func mustSend(t *testing.T, s *arq.Sender, from, to int, now time.Time) {
	t.Helper()
	for i := from; i < to; i++ {
		if err := s.Sent(uint32(i), []byte{byte(i)}, now); err != nil {
			t.Fatalf("Sent(%d): %v", i, err)
		}
	}
}

func seqs(rs []arq.Resend) []uint32 {
	var out []uint32
	for _, r := range rs {
		out = append(out, r.Seq)
	}
	return out
}

func TestSender_Window(t *testing.T) {
	var s arq.Sender
	mustSend(t, &s, 0, arq.Window, t0)
	if s.Room(1) {
		t.Fatalf("Room after %d records: got true, want false", arq.Window)
	}
	if err := s.Sent(arq.Window, []byte{1}, t0); !errors.Is(err, arq.ErrWindowFull) {
		t.Fatalf("Sent past the window: got %v, want ErrWindowFull", err)
	}
	if _, err := s.OnAck(1, 0, t0); err != nil {
		t.Fatal(err)
	}
	if !s.Room(1) {
		t.Fatal("Room after an ack: got false, want true")
	}
	if err := s.Sent(5, []byte{1}, t0); !errors.Is(err, arq.ErrSeqOrder) {
		t.Fatalf("Sent out of order: got %v, want ErrSeqOrder", err)
	}

	// Bytes: an oversized record alone fits, a second one does not.
	var b arq.Sender
	big := make([]byte, arq.WindowBytes+1)
	if !b.Room(len(big)) {
		t.Fatal("an oversized record alone must fit")
	}
	if err := b.Sent(0, big, t0); err != nil {
		t.Fatal(err)
	}
	if b.Room(1) {
		t.Fatal("Room with WindowBytes retained: got true, want false")
	}
	if recs, n := b.Retained(); recs != 1 || n != len(big) {
		t.Fatalf("Retained: got %d records %d bytes", recs, n)
	}
}

func TestSender_AcksAndRTT(t *testing.T) {
	var s arq.Sender
	mustSend(t, &s, 0, 8, t0)
	if s.RTO() != arq.InitialRTO {
		t.Fatalf("RTO before a sample: got %v, want %v", s.RTO(), arq.InitialRTO)
	}
	// Cumulative 3 and bits for 4, 6 (bit 0 = seq ack+1 = 4, bit 2 = 6).
	prog, err := s.OnAck(3, 0b101, t0.Add(2*time.Millisecond))
	if err != nil || !prog {
		t.Fatalf("OnAck: %v, %v", prog, err)
	}
	if recs, b := s.Retained(); recs != 5 || b != 3 { // 3..7 in the window; 3, 5, 7 hold payload
		t.Fatalf("Retained: got %d records %d bytes, want 5 and 3", recs, b)
	}
	if s.RTO() != arq.MinRTO {
		t.Fatalf("RTO after a 2 ms sample: got %v, want the %v floor", s.RTO(), arq.MinRTO)
	}
	// A stale ack changes nothing; a repeated one is no progress.
	if prog, err := s.OnAck(1, 0, t0); err != nil || prog {
		t.Fatalf("stale ack: %v, %v", prog, err)
	}
	// Acks of unsent seqs are protocol errors and change nothing.
	for _, a := range [][2]uint32{{9, 0}, {3, 1 << 4}, {8, 1}} {
		if _, err := s.OnAck(a[0], a[1], t0); !errors.Is(err, arq.ErrAckBeyondSent) {
			t.Errorf("OnAck(%d, %b): got %v, want ErrAckBeyondSent", a[0], a[1], err)
		}
	}
	if _, err := s.OnAck(8, 0, t0); err != nil {
		t.Fatal(err)
	}
	if recs, b := s.Retained(); recs != 0 || b != 0 {
		t.Fatalf("Retained after the final ack: %d, %d", recs, b)
	}
	if _, ok := s.Deadline(); ok {
		t.Fatal("Deadline with nothing retained")
	}
}

func TestSender_FastRetransmit(t *testing.T) {
	var s arq.Sender
	mustSend(t, &s, 0, 10, t0)
	now := t0.Add(time.Millisecond)
	// 0 missing, 1..2 acknowledged: below the threshold.
	if _, err := s.OnAck(0, 0b11, now); err != nil {
		t.Fatal(err)
	}
	if got := s.Due(nil, now); len(got) != 0 {
		t.Fatalf("Due with %d later acks: %v, want nothing", 2, seqs(got))
	}
	// 0 and 4 missing, 1..3 and 5..8 acknowledged: 0 is resent at once (3 later acks above
	// it), 4 too (4 acks above it); 9 is not acknowledged, nothing above it.
	if _, err := s.OnAck(0, 0b11110111, now); err != nil {
		t.Fatal(err)
	}
	if at, ok := s.Deadline(); !ok || at.After(now) {
		t.Fatalf("Deadline: %v %v, want now", at, ok)
	}
	if got := seqs(s.Due(nil, now)); len(got) != 2 || got[0] != 0 || got[1] != 4 {
		t.Fatalf("Due: got %v, want [0 4]", got)
	}
	// Resent once: not again before an RTO.
	if got := s.Due(nil, now.Add(time.Millisecond)); len(got) != 0 {
		t.Fatalf("Due right after the fast resend: %v", seqs(got))
	}
	if got := seqs(s.Due(nil, now.Add(s.RTO()))); len(got) != 2 {
		t.Fatalf("Due after an RTO: got %v, want [0 4]", got)
	}
}

func TestSender_TimeoutBackoff(t *testing.T) {
	var s arq.Sender
	mustSend(t, &s, 0, 3, t0)
	now := t0
	if got := s.Due(nil, now.Add(arq.InitialRTO-time.Nanosecond)); len(got) != 0 {
		t.Fatalf("Due before the RTO: %v", seqs(got))
	}
	rto := arq.InitialRTO
	for i := range 6 {
		at, ok := s.Deadline()
		if !ok || at != now.Add(rto) {
			t.Fatalf("round %d: Deadline %v, want %v", i, at.Sub(t0), now.Add(rto).Sub(t0))
		}
		now = at
		if got := seqs(s.Due(nil, now)); len(got) != 1 || got[0] != 0 {
			t.Fatalf("round %d: Due got %v, want only the oldest [0]", i, got)
		}
		rto = min(2*rto, arq.MaxRTO)
		if s.RTO() != rto {
			t.Fatalf("round %d: RTO %v, want %v", i, s.RTO(), rto)
		}
	}
	// Progress ends the back-off (no valid sample: 0 was resent; the estimate is kept).
	if _, err := s.OnAck(1, 0, now); err != nil {
		t.Fatal(err)
	}
	if s.RTO() != arq.InitialRTO {
		t.Fatalf("RTO after progress: got %v, want %v", s.RTO(), arq.InitialRTO)
	}
}

func TestReceiver_OrderAndAcks(t *testing.T) {
	var r arq.Receiver
	recv := func(seq uint32, now time.Time) []string {
		t.Helper()
		out, err := r.Receive(nil, seq, []byte{byte('a' + seq)}, now)
		if err != nil {
			t.Fatalf("Receive(%d): %v", seq, err)
		}
		var s []string
		for _, b := range out {
			s = append(s, string(b))
		}
		return s
	}
	if got := recv(0, t0); len(got) != 1 || got[0] != "a" {
		t.Fatalf("in order: %v", got)
	}
	if r.AckDue(t0) {
		t.Fatal("ack due at once after one in-order record")
	}
	if at, ok := r.AckDeadline(); !ok || at != t0.Add(arq.AckDelay) {
		t.Fatalf("AckDeadline: %v %v, want +%v", at, ok, arq.AckDelay)
	}
	if !r.AckDue(t0.Add(arq.AckDelay)) {
		t.Fatal("delayed ack not due after AckDelay")
	}
	r.AckSent()
	// 2 and 4 arrive before 1: buffered, an ack is due at once with their bits.
	if got := recv(2, t0); got != nil {
		t.Fatalf("out of order released %v", got)
	}
	recv(4, t0)
	recv(4, t0) // duplicate of a buffered one: first copy kept
	if !r.AckDue(t0) {
		t.Fatal("no ack due at once after a gap")
	}
	if a, b := r.Ack(); a != 1 || b != 0b101 {
		t.Fatalf("Ack: got %d %b, want 1 101", a, b)
	}
	r.AckSent()
	if got := recv(1, t0); len(got) != 2 || got[0] != "b" || got[1] != "c" {
		t.Fatalf("gap filled: got %v, want [b c]", got)
	}
	if !r.AckDue(t0) {
		t.Fatal("no ack due at once after a repaired gap")
	}
	if a, b := r.Ack(); a != 3 || b != 0b1 {
		t.Fatalf("Ack: got %d %b, want 3 1", a, b)
	}
	r.AckSent()
	if got := recv(0, t0); got != nil || !r.AckDue(t0) {
		t.Fatalf("stale record: released %v, ack due %v (want nothing, due)", got, r.AckDue(t0))
	}
	if _, err := r.Receive(nil, 3+arq.Window, []byte{1}, t0); !errors.Is(err, arq.ErrBeyondWindow) {
		t.Fatalf("beyond the window: got %v", err)
	}
	if _, err := r.Receive(nil, 3+arq.Window-1, []byte{1}, t0); err != nil {
		t.Fatalf("last seq of the window: %v", err)
	}
	if r.Buffered() != 2 {
		t.Fatalf("Buffered: got %d, want 2", r.Buffered())
	}
	// AckEvery in-order records make an ack due at once.
	var q arq.Receiver
	for i := range arq.AckEvery {
		if q.AckDue(t0) {
			t.Fatalf("ack due after %d records", i)
		}
		if _, err := q.Receive(nil, uint32(i), []byte{1}, t0); err != nil {
			t.Fatal(err)
		}
	}
	if !q.AckDue(t0) {
		t.Fatalf("no ack due after %d records", arq.AckEvery)
	}
}

func TestReceiver_MaxSeqRejected(t *testing.T) {
	var r arq.Receiver
	if _, err := r.Receive(nil, ^uint32(0), []byte{1}, t0); !errors.Is(err, arq.ErrBeyondWindow) {
		t.Fatalf("seq 2^32-1: got %v", err)
	}
}

// TestLossyLink pushes records through seeded random drops, duplicates and delays and
// requires in-order, complete, exact delivery within bounded virtual time.
func TestLossyLink(t *testing.T) {
	for _, seed := range []uint64{1, 42, 1234} {
		rng := rand.New(rand.NewPCG(seed, seed))
		b := make([]byte, 20000)
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		if err := simulate(1000, &faults{b: b}, faultBound(b)); err != nil {
			t.Errorf("seed %d: %v", seed, err)
		}
	}
	// Heavy loss: every third packet dropped for a while.
	heavy := make([]byte, 3000)
	for i := range heavy {
		if i%3 == 0 {
			heavy[i] = 1
		}
	}
	if err := simulate(500, &faults{b: heavy}, faultBound(heavy)); err != nil {
		t.Errorf("heavy loss: %v", err)
	}
}

// faultBound is the virtual time within which a simulation over fault bytes b must end:
// while anything is unacknowledged a packet is sent at least once per MaxRTO, each takes
// one byte, and once they are used up the link is perfect.
func faultBound(b []byte) time.Duration {
	return time.Duration(len(b)+1)*arq.MaxRTO + time.Minute
}

// FuzzLossyLink: for any fault pattern the link delivers everything in order (seed corpus in
// testdata/fuzz/FuzzLossyLink).
func FuzzLossyLink(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{1, 0, 0, 1, 2, 3, 0x13, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 0xf3})
	f.Add([]byte{1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1})
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) > 4096 {
			b = b[:4096]
		}
		if err := simulate(200, &faults{b: b}, faultBound(b)); err != nil {
			t.Fatal(err)
		}
	})
}
