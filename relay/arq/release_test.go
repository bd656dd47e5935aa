package arq_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/execlab/executor/relay/arq"
)

// TestSenderAck_ReleasesEachOnce: Ack hands back every payload exactly once, whether it is
// acknowledged selectively first and then cumulatively, cumulatively only, or by a stale or
// repeated ack; Drain hands back exactly the ones still retained.
func TestSenderAck_ReleasesEachOnce(t *testing.T) {
	var s arq.Sender
	mustSend(t, &s, 0, 10, t0)
	var released [][]byte
	step := func(ack, bits uint32, want ...byte) {
		t.Helper()
		var err error
		released, _, err = s.Ack(released[:0], ack, bits, t0.Add(time.Millisecond))
		if err != nil {
			t.Fatalf("Ack(%d, %#x): %v", ack, bits, err)
		}
		var got []byte
		for _, p := range released {
			got = append(got, p[0])
		}
		if !slices.Equal(got, want) {
			t.Fatalf("Ack(%d, %#x) released %v, want %v", ack, bits, got, want)
		}
	}
	step(2, 0b101, 0, 1, 3, 5) // cumulative 0–1, selective 3 and 5
	step(2, 0b101)             // repeated: nothing new
	step(4, 0b1, 2)            // 3 already released, 5 again selectively
	step(1, 0)                 // stale
	step(7, 0, 4, 6)           // 5 was released selectively
	if got := s.Drain(nil); len(got) != 3 || got[0][0] != 7 || got[2][0] != 9 {
		t.Fatalf("Drain returned %d payloads, want 7, 8, 9", len(got))
	}
	if n, b := s.Retained(); n != 0 || b != 0 {
		t.Fatalf("after Drain: %d records, %d bytes retained", n, b)
	}
}

// TestEndpoint_HoldAndDrain: the driver (Timers) calls the hold function for every record it hands
// to send, under the lock (before an ack can release it); after Drain nothing is resent,
// Send fails and the retained payloads come back once.
func TestEndpoint_HoldAndDrain(t *testing.T) {
	e := arq.NewEndpoint()
	var (
		mu    sync.Mutex
		held  []byte
		resnt []byte
	)
	e.SetHold(func(p []byte) { mu.Lock(); held = append(held, p[0]); mu.Unlock() })
	done := make(chan struct{})
	var (
		wg   sync.WaitGroup
		once sync.Once
	)
	tm := arq.NewTimers(e, arq.TimersConfig{Group: &wg, Send: func(rs []arq.Resend, _ bool) error {
		mu.Lock()
		defer mu.Unlock()
		for _, r := range rs {
			resnt = append(resnt, r.Payload[0])
		}
		if len(resnt) > 0 {
			once.Do(func() { close(done) })
		}
		return nil
	}})
	defer func() { tm.Stop(); wg.Wait() }()
	for i := range 3 {
		if err := e.Send(context.Background(), nil, uint32(i), []byte{byte(i)}); err != nil {
			t.Fatal(err)
		}
	}
	select { // the first timeout resends record 0 (after InitialRTO)
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("no resend within 10 s")
	}
	mu.Lock()
	if !slices.Equal(held, resnt) || len(held) == 0 || held[0] != 0 {
		t.Fatalf("held %v, resent %v: want the same, starting with record 0", held, resnt)
	}
	mu.Unlock()
	released, err := e.OnAckRelease(nil, 1, 0)
	if err != nil || len(released) != 1 || released[0][0] != 0 {
		t.Fatalf("OnAckRelease(1): %v, %v", released, err)
	}
	if got := e.Drain(nil); len(got) != 2 || got[0][0] != 1 || got[1][0] != 2 {
		t.Fatalf("Drain returned %v, want records 1 and 2", got)
	}
	if err := e.Send(context.Background(), nil, 3, []byte{3}); err == nil {
		t.Fatal("Send after Drain succeeded")
	}
	if got := e.Drain(nil); len(got) != 0 {
		t.Fatalf("second Drain returned %d payloads", len(got))
	}
}
