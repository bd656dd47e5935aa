package process_test

import (
	"context"
	"testing"
	"time"

	"github.com/execlab/executor/executor/process"
	"github.com/execlab/executor/executor/protocol"
)

const (
	ackTestTotal  = 4 << 20
	ackTestBound  = 256 << 10
	ackTestWindow = 64 << 10
)

// retainedBytes returns the output bytes process/read returns after afterSeq, and whether
// the process exited.
func retainedBytes(t *testing.T, m *process.Manager, id string) (int, bool) {
	t.Helper()
	res, err := m.Read(context.Background(), &protocol.ProcessReadParams{ProcessID: id, AfterSeq: u64(0)})
	if err != nil {
		t.Fatalf("Read: %v", err)
	}
	n := 0
	for _, c := range res.Chunks {
		n += len(c.Chunk)
	}
	return n, res.Exited
}

// TestOutputAck_BackPressureNoDrops: detached (an outage), the reader runs ahead until the
// retained output reaches the bound, then the child blocks (nothing is evicted, it does not
// finish); attached, only the window is pushed, and acking what arrives delivers every
// byte, in seq order, then the exit and the close.
func TestOutputAck_BackPressureNoDrops(t *testing.T) {
	m := newManager(t, &process.Options{MaxUnackedBytes: ackTestBound, OutputWindow: ackTestWindow})
	n := newNotifier(4096)
	p := startParams("p", tmpURI(t), "head", "-c", "4194304", "/dev/zero")
	p.OutputAck = true
	mustStart(t, m, p)

	// The reader stops at the bound: wait (bounded) until it is reached.
	deadline := time.Now().Add(10 * time.Second)
	for {
		got, exited := retainedBytes(t, m, "p")
		if exited {
			t.Fatalf("the child finished with %d bytes retained and nothing acknowledged: output was not held back", got)
		}
		if got >= ackTestBound {
			if got > ackTestBound+256<<10 {
				t.Fatalf("retained %d bytes, want at most the bound %d plus one read", got, ackTestBound)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("retained only %d bytes", got)
		}
		time.Sleep(5 * time.Millisecond)
	}
	m.Attach(n)
	// Only the window is pushed: wait for it, then check nothing more comes unacknowledged.
	for len(n.ch) == 0 {
		time.Sleep(time.Millisecond)
	}
	time.Sleep(50 * time.Millisecond)
	pushed := 0
	for len(n.ch) > 0 {
		ev := <-n.ch
		pushed += len(ev.chunk)
		if pushed > ackTestWindow+256<<10 {
			t.Fatalf("pushed %d bytes unacknowledged, want at most the window %d plus one chunk", pushed, ackTestWindow)
		}
		m.Ack(&protocol.ProcessAckParams{ProcessID: "p", Seq: ev.seq})
	}

	total := pushed
	for {
		select {
		case ev := <-n.ch:
			m.Ack(&protocol.ProcessAckParams{ProcessID: "p", Seq: ev.seq})
			switch ev.method {
			case protocol.MethodProcessOutput:
				total += len(ev.chunk)
			case protocol.MethodProcessExited:
				if ev.code != 0 {
					t.Fatalf("exit code %d", ev.code)
				}
			case protocol.MethodProcessClosed:
				if total != ackTestTotal {
					t.Fatalf("delivered %d bytes, want %d", total, ackTestTotal)
				}
				return
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("stalled after %d bytes", total)
		}
	}
}

// TestOutputAck_ReattachResendsUnacked: events pushed on a connection that went away and
// were not acknowledged are pushed again, from the acknowledged seq, on the next attach;
// output produced while detached is kept (beyond the released 1 MiB ring) and follows.
func TestOutputAck_ReattachResendsUnacked(t *testing.T) {
	m := newManager(t, &process.Options{MaxRetainedBytes: 1 << 10})
	first := newNotifier(4096)
	m.Attach(first)
	p := startParams("p", tmpURI(t), "sh", "-c", "head -c 100000 /dev/zero; read x; head -c 3000000 /dev/zero")
	p.OutputAck = true
	p.PipeStdin = true
	mustStart(t, m, p)

	got := 0
	var lastSeq, acked uint64
	for got < 100000 {
		select {
		case ev := <-first.ch:
			got += len(ev.chunk)
			lastSeq = ev.seq
			if got < 50000 {
				acked = ev.seq
				m.Ack(&protocol.ProcessAckParams{ProcessID: "p", Seq: ev.seq})
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("got %d bytes", got)
		}
	}
	m.Attach(nil)
	if _, err := m.Write(context.Background(), &protocol.ProcessWriteParams{ProcessID: "p", Chunk: []byte("go\n"), WriteID: "w1"}); err != nil {
		t.Fatalf("Write: %v", err)
	}
	second := newNotifier(4096)
	m.Attach(second)
	want := acked + 1
	total := 0
	for {
		select {
		case ev := <-second.ch:
			if ev.seq != want {
				t.Fatalf("after reattach got seq %d, want %d (resend from the acknowledged seq %d; %d was the last pushed)", ev.seq, want, acked, lastSeq)
			}
			want++
			total += len(ev.chunk)
			m.Ack(&protocol.ProcessAckParams{ProcessID: "p", Seq: ev.seq})
			if ev.method == protocol.MethodProcessClosed {
				if total < 3000000 {
					t.Fatalf("after reattach delivered %d bytes, want at least 3000000", total)
				}
				return
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("stalled at seq %d", want)
		}
	}
}

// TestOutputAck_ClosedKeptUntilAcked: a closed outputAck process stays readable past the
// closed retention until its close is acknowledged.
func TestOutputAck_ClosedKeptUntilAcked(t *testing.T) {
	m := newManager(t, &process.Options{ClosedRetention: time.Nanosecond})
	n := newNotifier(64)
	m.Attach(n)
	p := startParams("p", tmpURI(t), "echo", "hi")
	p.OutputAck = true
	mustStart(t, m, p)
	evs := n.untilClosed(t, "p")
	if _, _, err := readOnce(m, "p"); err != nil {
		t.Fatalf("read before the close was acknowledged: %v", err)
	}
	m.Ack(&protocol.ProcessAckParams{ProcessID: "p", Seq: evs[len(evs)-1].seq})
	// The 1 ns retention runs on a real timer (the child is a real process): poll, bounded.
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
		if _, _, err := readOnce(m, "p"); err != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("process still readable 5 s after its close was acknowledged (retention 1 ns)")
		}
	}
}

func readOnce(m *process.Manager, id string) ([]protocol.ProcessOutputChunk, bool, error) {
	res, err := m.Read(context.Background(), &protocol.ProcessReadParams{ProcessID: id})
	if err != nil {
		return nil, false, err
	}
	return res.Chunks, res.Closed, nil
}

// drainQuiet collects n's events until none arrives for quiet (the sender waits for
// acknowledgements), bounded by 10 s in all.
func drainQuiet(t *testing.T, n *chanNotifier, quiet time.Duration) []event {
	t.Helper()
	var evs []event
	deadline := time.After(10 * time.Second)
	for {
		select {
		case ev := <-n.ch:
			evs = append(evs, ev)
		case <-time.After(quiet):
			return evs
		case <-deadline:
			t.Fatalf("events kept coming for 10 s without acknowledgements (%d so far)", len(evs))
		}
	}
}

// outputBytes sums the output chunks of evs and checks their seqs run from first on.
func outputBytes(t *testing.T, evs []event, first uint64) int {
	t.Helper()
	n := 0
	for i, ev := range evs {
		if ev.seq != first+uint64(i) {
			t.Fatalf("event %d has seq %d, want %d", i, ev.seq, first+uint64(i))
		}
		n += len(ev.chunk)
	}
	return n
}

// TestOutputAck_FlowControlledWindow: the window is the attachment's. Attached with
// AttachFlowControlled, a lossless process pushes up to FlowControlledOutputWindow
// unacknowledged (more than OutputWindow plus a chunk, never more than the window);
// re-attached with Attach it resends from the acknowledged seq within OutputWindow (plus
// the one chunk an empty window admits); acknowledged, every byte arrives once, in order.
func TestOutputAck_FlowControlledWindow(t *testing.T) {
	const (
		plain = 64 << 10
		flow  = 1 << 20
		total = 8 << 20
		chunk = 256 << 10 // the largest read
	)
	m := newManager(t, &process.Options{MaxUnackedBytes: 4 << 20, OutputWindow: plain, FlowControlledOutputWindow: flow})
	first := newNotifier(4096)
	m.AttachFlowControlled(first)
	p := startParams("p", tmpURI(t), "head", "-c", "8388608", "/dev/zero")
	p.OutputAck = true
	mustStart(t, m, p)

	if pushed := outputBytes(t, drainQuiet(t, first, 200*time.Millisecond), 1); pushed <= plain+chunk || pushed > flow {
		t.Fatalf("flow-controlled attachment pushed %d bytes unacknowledged, want more than %d (the plain window and a chunk) and at most %d", pushed, plain+chunk, flow)
	}

	second := newNotifier(4096)
	m.Attach(second)
	evs := drainQuiet(t, second, 200*time.Millisecond)
	if pushed := outputBytes(t, evs, 1); pushed > plain+chunk {
		t.Fatalf("plain attachment pushed %d bytes unacknowledged, want at most %d (its window and a chunk)", pushed, plain+chunk)
	}
	got, want := 0, uint64(1)
	for {
		for _, ev := range evs {
			if ev.seq != want {
				t.Fatalf("got seq %d, want %d", ev.seq, want)
			}
			want++
			got += len(ev.chunk)
			m.Ack(&protocol.ProcessAckParams{ProcessID: "p", Seq: ev.seq})
			if ev.method == protocol.MethodProcessClosed {
				if got != total {
					t.Fatalf("delivered %d bytes, want %d", got, total)
				}
				return
			}
		}
		select {
		case ev := <-second.ch:
			evs = []event{ev}
		case <-time.After(10 * time.Second):
			t.Fatalf("stalled at seq %d after %d bytes", want, got)
		}
	}
}

// TestOutputAck_FlowControlledWindowKeepsTheBound: a flow-controlled window larger than
// MaxUnackedBytes does not lift the bound: without acknowledgements the child stops there
// (it does not finish) and no more than the bound plus one read is pushed.
func TestOutputAck_FlowControlledWindowKeepsTheBound(t *testing.T) {
	const (
		bound = 1 << 20
		chunk = 256 << 10
	)
	m := newManager(t, &process.Options{MaxUnackedBytes: bound, FlowControlledOutputWindow: 8 << 20})
	n := newNotifier(4096)
	m.AttachFlowControlled(n)
	p := startParams("p", tmpURI(t), "head", "-c", "8388608", "/dev/zero")
	p.OutputAck = true
	mustStart(t, m, p)
	evs := drainQuiet(t, n, 300*time.Millisecond)
	for _, ev := range evs {
		if ev.method != protocol.MethodProcessOutput {
			t.Fatalf("got %s before any acknowledgement: the child was not held at the bound", ev.method)
		}
	}
	if pushed := outputBytes(t, evs, 1); pushed < bound || pushed > bound+chunk {
		t.Fatalf("pushed %d bytes unacknowledged, want the bound %d (plus at most one read)", pushed, bound)
	}
	if _, exited := retainedBytes(t, m, "p"); exited {
		t.Fatal("the child finished with nothing acknowledged")
	}
}
