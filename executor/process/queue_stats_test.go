package process_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/execlab/executor/executor/process"
	"github.com/execlab/executor/executor/protocol"
)

// waitObserver records Backpressure calls by queue; the other Observer methods count
// nothing.
type waitObserver struct {
	mu    sync.Mutex
	waits map[string]int
}

func (o *waitObserver) ProcessStarted()                 {}
func (o *waitObserver) ProcessExited(process.ExitClass) {}
func (o *waitObserver) OutputBytes(int)                 {}
func (o *waitObserver) Backpressure(queue string, d time.Duration) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.waits == nil {
		o.waits = map[string]int{}
	}
	o.waits[queue]++
}

func (o *waitObserver) count(queue string) int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.waits[queue]
}

// waitStats polls m.QueueStats (bounded) until ok accepts it.
func waitStats(t *testing.T, m *process.Manager, what string, ok func(process.QueueStats) bool) process.QueueStats {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		s := m.QueueStats()
		if ok(s) {
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("QueueStats never showed %s: last %+v", what, s)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestQueueStats_LosslessBoundAndWindow: a detached outputAck process stops at its
// unacknowledged bound and QueueStats shows it blocked, with the bound's bytes retained;
// once attached and acknowledged, the reader's wait at the bound and the sender's waits
// for the window are reported as back-pressure, and the process leaves nothing
// unacknowledged behind.
func TestQueueStats_LosslessBoundAndWindow(t *testing.T) {
	obs := &waitObserver{}
	m := newManager(t, &process.Options{MaxUnackedBytes: ackTestBound, OutputWindow: ackTestWindow, Observer: obs})
	p := startParams("p", tmpURI(t), "head", "-c", "4194304", "/dev/zero")
	p.OutputAck = true
	mustStart(t, m, p)

	s := waitStats(t, m, "one process blocked at its bound", func(s process.QueueStats) bool { return s.BlockedAtBound == 1 })
	if s.UnackedBytes < ackTestBound || s.RetainedBytes < s.UnackedBytes {
		t.Fatalf("blocked at the bound: got %+v, want UnackedBytes >= %d and RetainedBytes >= UnackedBytes", s, ackTestBound)
	}
	if got := obs.count(process.QueueOutputBound); got != 0 {
		t.Fatalf("output_bound waits reported while still waiting: %d, want 0", got)
	}

	n := newNotifier(4096)
	m.Attach(n)
	total := 0
	for done := false; !done; {
		select {
		case ev := <-n.ch:
			m.Ack(&protocol.ProcessAckParams{ProcessID: "p", Seq: ev.seq})
			total += len(ev.chunk)
			done = ev.method == protocol.MethodProcessClosed
		case <-time.After(10 * time.Second):
			t.Fatalf("stalled after %d bytes", total)
		}
	}
	if total != 4<<20 {
		t.Fatalf("delivered %d bytes, want %d", total, 4<<20)
	}
	if got := obs.count(process.QueueOutputBound); got < 1 {
		t.Errorf("output_bound waits: got %d, want >= 1 (the reader waited at the bound)", got)
	}
	if got := obs.count(process.QueueOutputWindow); got < 1 {
		t.Errorf("output_window waits: got %d, want >= 1 (4 MiB through a 64 KiB window)", got)
	}
	waitStats(t, m, "nothing unacknowledged", func(s process.QueueStats) bool { return s.UnackedBytes == 0 && s.BlockedAtBound == 0 })
}

// TestQueueStats_Stdin: process/write bytes waiting behind a write the child does not read
// are counted; the write being written is not (the writer took it).
func TestQueueStats_Stdin(t *testing.T) {
	m := newManager(t, nil)
	p := startParams("p", tmpURI(t), "sleep", "60")
	p.PipeStdin = true
	mustStart(t, m, p)
	write := func(id string, n int) {
		t.Helper()
		if _, err := m.Write(context.Background(), &protocol.ProcessWriteParams{ProcessID: "p", WriteID: id, Chunk: make([]byte, n)}); err != nil {
			t.Fatalf("Write %s: %v", id, err)
		}
	}
	write("a", 4<<20) // far more than the pipe holds: the writer blocks in it
	waitStats(t, m, "the writer taking the first write", func(s process.QueueStats) bool { return s.StdinBytes == 0 })
	write("b", 1<<20)
	waitStats(t, m, "1 MiB queued behind it", func(s process.QueueStats) bool { return s.StdinBytes == 1<<20 })
}
