package mux_test

import (
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/execlab/executor/relay/mux"
)

// waitObserver records Backpressure calls; the other Observer methods count nothing.
type waitObserver struct {
	mu      sync.Mutex
	queues  []string
	longest time.Duration
}

func (o *waitObserver) FrameDropped(string)     {}
func (o *waitObserver) HandshakeRefused(string) {}
func (o *waitObserver) CooldownEntered()        {}
func (o *waitObserver) Backpressure(queue string, d time.Duration) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.queues = append(o.queues, queue)
	o.longest = max(o.longest, d)
}

func (o *waitObserver) got() ([]string, time.Duration) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]string(nil), o.queues...), o.longest
}

// TestMux_OutboundQueueDepthAndWait: with a peer that reads nothing, Stats shows the
// outbound queue full, and the record write that found it full waits; once the peer
// reads, that wait (a second of the bubble's clock) is reported as relay_outbound
// back-pressure, and every record arrives in order. (Writes that found the queue full
// only for an instant, before the writer took a frame, are reported too: how many is up
// to the scheduler.)
func TestMux_OutboundQueueDepthAndWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		obs := &waitObserver{}
		// Queue of 2 behind a 1-frame pipe: record 0 sits in the pipe, the writer blocks
		// on record 1, records 2 and 3 fill the queue and record 4's write waits.
		e := newEnvCap(t, &testHandler{}, &mux.Options{OutboundQueue: 2, Observer: obs}, 1)
		e.open("s")
		const n = 5
		for i := range uint32(n) {
			e.data("s", i, fmt.Sprint("rec", i))
		}
		if got := e.stats(); got.Outbound != 2 {
			t.Fatalf("Stats().Outbound with a stalled peer: got %d, want 2 (the queue's capacity)", got.Outbound)
		}
		time.Sleep(time.Second) // the stalled write waits a second of fake time
		for i := range uint32(n) {
			e.expectData("s", i, fmt.Sprint("rec", i))
		}
		synctest.Wait()
		queues, longest := obs.got()
		if len(queues) == 0 || longest < time.Second {
			t.Errorf("back-pressure reports: got %v, longest %v; want at least one, of >= 1s", queues, longest)
		}
		for _, q := range queues {
			if q != mux.QueueOutbound {
				t.Errorf("back-pressure queue: got %q, want %q", q, mux.QueueOutbound)
			}
		}
		if got := e.stats(); got.Outbound != 0 {
			t.Errorf("Stats().Outbound once drained: got %d, want 0", got.Outbound)
		}
	})
}
