package arq_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/execlab/executor/relay/arq"
)

type sent struct {
	resends []uint32
	ack     bool
	at      time.Duration
}

// TestEndpoint_Timers drives the Endpoint with Timers on a virtual clock: a delayed ack after AckDelay, an
// ack at once after a gap, a resend of an unacknowledged record after the initial RTO, and
// Send blocking on a full window until an ack opens it.
func TestEndpoint_Timers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := arq.NewEndpoint()
		start := time.Now()
		var (
			mu  sync.Mutex
			log []sent
		)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		var wg sync.WaitGroup
		tm := arq.NewTimers(e, arq.TimersConfig{Group: &wg, Send: func(rs []arq.Resend, ack bool) error {
			s := sent{ack: ack, at: time.Since(start)}
			for _, r := range rs {
				s.resends = append(s.resends, r.Seq)
			}
			if ack {
				e.TakeAck()
			}
			mu.Lock()
			log = append(log, s)
			mu.Unlock()
			return nil
		}})
		defer func() { tm.Stop(); wg.Wait() }()
		last := func() sent {
			t.Helper()
			synctest.Wait()
			mu.Lock()
			defer mu.Unlock()
			if len(log) == 0 {
				t.Fatal("nothing sent")
			}
			s := log[len(log)-1]
			log = nil
			return s
		}

		if _, _, err := e.Receive(nil, 0, []byte{1}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(arq.AckDelay)
		if s := last(); !s.ack || s.at != arq.AckDelay {
			t.Fatalf("delayed ack: %+v, want an ack at %v", s, arq.AckDelay)
		}
		if _, _, err := e.Receive(nil, 2, []byte{1}); err != nil { // gap: 1 missing
			t.Fatal(err)
		}
		if s := last(); !s.ack || s.at != arq.AckDelay {
			t.Fatalf("gap ack: %+v, want one at once", s)
		}

		if err := e.Send(ctx, nil, 0, []byte("r0")); err != nil {
			t.Fatal(err)
		}
		sentAt := time.Since(start)
		time.Sleep(arq.InitialRTO)
		if s := last(); len(s.resends) != 1 || s.resends[0] != 0 || s.at != sentAt+arq.InitialRTO {
			t.Fatalf("timeout resend: %+v, want seq 0 at %v", s, sentAt+arq.InitialRTO)
		}

		// Fill the window; the next Send waits for an ack.
		for i := 1; i < arq.Window; i++ {
			if err := e.Send(ctx, nil, uint32(i), []byte{1}); err != nil {
				t.Fatal(err)
			}
		}
		blocked := make(chan error, 1)
		go func() { blocked <- e.Send(ctx, nil, arq.Window, []byte{1}) }()
		synctest.Wait()
		select {
		case err := <-blocked:
			t.Fatalf("Send with a full window returned %v", err)
		default:
		}
		if err := e.OnAck(1, 0); err != nil {
			t.Fatal(err)
		}
		if err := <-blocked; err != nil {
			t.Fatalf("Send after the ack: %v", err)
		}
		if recs, _ := e.Retained(); recs != arq.Window {
			t.Fatalf("Retained: %d, want %d", recs, arq.Window)
		}
		// An ack of a seq never sent is sticky.
		if err := e.OnAck(arq.Window+5, 0); !errors.Is(err, arq.ErrAckBeyondSent) || !errors.Is(e.Err(), arq.ErrAckBeyondSent) {
			t.Fatalf("OnAck beyond sent: %v / %v", err, e.Err())
		}
	})
}

// TestTimers_StopDrains: Stop hands every retained record to Release once, starts nothing
// afterwards, and leaves no goroutine or timer behind (synctest fails on either).
func TestTimers_StopDrains(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := arq.NewEndpoint()
		var (
			wg       sync.WaitGroup
			released [][]byte
		)
		tm := arq.NewTimers(e, arq.TimersConfig{Group: &wg,
			Send:    func([]arq.Resend, bool) error { return nil },
			Release: func(p []byte) { released = append(released, p) },
		})
		for i := range 3 {
			if err := e.Send(context.Background(), nil, uint32(i), []byte{byte(i)}); err != nil {
				t.Fatal(err)
			}
		}
		synctest.Wait() // the drive goroutine armed the RTO timer and exited
		tm.Stop()
		wg.Wait()
		if len(released) != 3 || released[0][0] != 0 || released[2][0] != 2 {
			t.Fatalf("released %v, want records 0, 1, 2", released)
		}
		tm.Stop() // idempotent
		if _, _, err := e.Receive(nil, 5, []byte{1}); !errors.Is(err, arq.ErrClosed) {
			t.Fatalf("Receive after Stop: %v, want ErrClosed", err)
		}
		time.Sleep(time.Minute) // a timer armed after Stop would fire here
		if len(released) != 3 {
			t.Fatalf("released %d records after Stop", len(released))
		}
	})
}

// TestTimers_SendErrorIdles: a failed Send ends the round without arming the timer, and the
// next wake (here an ack due at once after a gap) starts a new one.
func TestTimers_SendErrorIdles(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := arq.NewEndpoint()
		var (
			wg    sync.WaitGroup
			calls int
		)
		tm := arq.NewTimers(e, arq.TimersConfig{Group: &wg, Send: func(_ []arq.Resend, ack bool) error {
			calls++
			if ack {
				e.TakeAck()
			}
			if calls == 1 {
				return errors.New("socket gone")
			}
			return nil
		}})
		defer func() { tm.Stop(); wg.Wait() }()
		if _, _, err := e.Receive(nil, 1, []byte{1}); err != nil { // gap: an ack is due at once
			t.Fatal(err)
		}
		synctest.Wait()
		time.Sleep(time.Minute)
		if calls != 1 {
			t.Fatalf("Send called %d times after it failed, want 1 (no timer armed)", calls)
		}
		if _, _, err := e.Receive(nil, 2, []byte{1}); err != nil { // still a gap: due again
			t.Fatal(err)
		}
		synctest.Wait()
		if calls != 2 {
			t.Fatalf("Send called %d times after the next wake, want 2", calls)
		}
	})
}
