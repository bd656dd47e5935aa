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
