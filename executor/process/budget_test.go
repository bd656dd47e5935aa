package process_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/execlab/executor/executor/process"
	"github.com/execlab/executor/executor/protocol"
)

// budgetTestTotal is the shared budget of the tests below: far under each process's own
// bound (the 64 MiB default) and its output, so the budget is what stops them.
const budgetTestTotal = 1 << 20

// budgetTestCmd writes 8 MiB of zeros to stdout and nothing to stderr.
var budgetTestCmd = []string{"head", "-c", "8388608", "/dev/zero"}

// waitBudget waits (bounded, event-driven) until cond holds for b.
func waitBudget(t *testing.T, b *process.Budget, what string, cond func(used, queued int) bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if !b.WaitForTest(ctx, cond) {
		t.Fatalf("timed out waiting for %s: used %d, queued %d", what, b.Used(), b.Queued())
	}
}

// unacked returns the output bytes process id retains (all unacknowledged: the tests
// below acknowledge through it) and the seq of its last event.
func unacked(t *testing.T, m *process.Manager, id string) (int, uint64) {
	t.Helper()
	res, err := m.Read(context.Background(), &protocol.ProcessReadParams{ProcessID: id, AfterSeq: u64(0)})
	if err != nil {
		t.Fatalf("Read %s: %v", id, err)
	}
	n := 0
	for _, c := range res.Chunks {
		n += len(c.Chunk)
	}
	return n, res.NextSeq - 1
}

// waitOutputAfter long-polls process/read until id has an event after seq (bounded).
func waitOutputAfter(t *testing.T, m *process.Manager, id string, seq uint64) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		res, err := m.Read(context.Background(), &protocol.ProcessReadParams{ProcessID: id, AfterSeq: u64(seq), WaitMs: u64(5000)})
		if err != nil {
			t.Fatalf("Read %s: %v", id, err)
		}
		if len(res.Chunks) > 0 {
			return
		}
	}
	t.Fatalf("%s: no output after seq %d", id, seq)
}

// budgeted is what a process with n unacknowledged bytes holds against the budget.
func budgeted(n int) int { return max(0, n-process.BudgetFreeBytes) }

// TestBudget_SharedAcrossSessions: two sessions (Managers) share one budget. A's detached
// process fills its free allowance and the budget, and stops; B's, started next, reads
// only its own free allowance (plus at most one read) and stops too. Acknowledging A's
// output frees budget and B resumes; when A's session ends (Close: a session's expiry)
// A's whole share returns, and B alone holds the budget; when B's ends the budget is
// empty. The budget is never exceeded by more than one read per output stream.
func TestBudget_SharedAcrossSessions(t *testing.T) {
	budget := process.NewBudget(budgetTestTotal)
	ma := process.NewManager(&process.Options{UnackedBudget: budget})
	defer ma.Close()
	mb := process.NewManager(&process.Options{UnackedBudget: budget})
	defer mb.Close()
	// Each process has two output streams, so four readers may each overshoot by a read.
	const ceiling = budgetTestTotal + 4*process.ReadBufferSize
	full := func(used, queued int) bool {
		if used > ceiling {
			t.Errorf("budget used %d, want at most %d (total + one read per stream)", used, ceiling)
		}
		return used >= budgetTestTotal && queued >= 1
	}

	pa := startParams("a", tmpURI(t), budgetTestCmd...)
	pa.OutputAck = true
	mustStart(t, ma, pa)
	waitBudget(t, budget, "A to fill the budget", full)

	pb := startParams("b", tmpURI(t), budgetTestCmd...)
	pb.OutputAck = true
	mustStart(t, mb, pb)
	// A's stdout reader, then B's: each stream's first read is under the free allowance,
	// so the stderr readers, with nothing to read, never ask the budget.
	waitBudget(t, budget, "B's reader to queue", func(_, queued int) bool { return queued == 2 })
	ua, lastA := unacked(t, ma, "a")
	ub, lastB := unacked(t, mb, "b")
	if ub < process.BudgetFreeBytes || ub > process.BudgetFreeBytes+process.ReadBufferSize {
		t.Fatalf("B retained %d bytes with the budget exhausted, want its free %d plus at most one read", ub, process.BudgetFreeBytes)
	}
	if got, want := budget.Used(), budgeted(ua)+budgeted(ub); got != want {
		t.Fatalf("budget used %d, want A's and B's unacknowledged beyond their free allowance: %d", got, want)
	}

	// Acknowledge all of A's output: the release grants every queued reader, B's included.
	ma.Ack(&protocol.ProcessAckParams{ProcessID: "a", Seq: lastA})
	waitOutputAfter(t, mb, "b", lastB)

	// Both run until the budget is full again; then A's session ends.
	waitBudget(t, budget, "A and B to fill the budget", full)
	ma.Close()
	// A's share is back: B (blocked behind the budget, or reading on with A's share) is
	// all the budget holds once it stops again.
	waitBudget(t, budget, "B to fill the budget alone", full)
	if ub, _ := unacked(t, mb, "b"); budgeted(ub) != budget.Used() {
		t.Fatalf("budget used %d with A's session closed, want B's share %d", budget.Used(), budgeted(ub))
	}

	mb.Close()
	if got := budget.Used(); got != 0 {
		t.Fatalf("budget used %d after every session closed, want 0", got)
	}
}

// TestBudget_ExitAndAckReturnShare: a process that exits keeps its unacknowledged output
// (it is owed to the client) until it is acknowledged; acknowledging it through the close
// returns the whole share, and the process blocked behind it reads on and, acknowledged as
// it goes, delivers every byte.
func TestBudget_ExitAndAckReturnShare(t *testing.T) {
	budget := process.NewBudget(budgetTestTotal)
	m := newManager(t, &process.Options{UnackedBudget: budget})
	// A writes its free allowance and half the budget, and exits.
	const aBytes = process.BudgetFreeBytes + budgetTestTotal/2
	pa := startParams("a", tmpURI(t), "head", "-c", strconv.Itoa(aBytes), "/dev/zero")
	pa.OutputAck = true
	mustStart(t, m, pa)
	res := readUntilClosedNoAck(t, m, "a")
	if res.ExitCode == nil || *res.ExitCode != 0 {
		t.Fatalf("A: %+v, want exit 0", res)
	}
	if got := budget.Used(); got != budgetTestTotal/2 {
		t.Fatalf("budget used %d after A exited unacknowledged, want its %d bytes beyond the free allowance", got, budgetTestTotal/2)
	}
	// B fills its free allowance and the other half, and blocks.
	const bBytes = 4 << 20
	pb := startParams("b", tmpURI(t), "head", "-c", strconv.Itoa(bBytes), "/dev/zero")
	pb.OutputAck = true
	mustStart(t, m, pb)
	waitBudget(t, budget, "B to fill the budget", func(used, queued int) bool { return used >= budgetTestTotal && queued >= 1 })
	before, _ := unacked(t, m, "b")

	// Acknowledge A through its close: its share returns, B reads on into it.
	m.Ack(&protocol.ProcessAckParams{ProcessID: "a", Seq: res.NextSeq - 1})
	waitBudget(t, budget, "B to fill the budget alone", func(used, queued int) bool { return used >= budgetTestTotal && queued >= 1 })
	if ub, _ := unacked(t, m, "b"); budgeted(ub) != budget.Used() || ub <= before {
		t.Fatalf("budget used %d, B unacknowledged %d (before A's ack: %d); want B's share alone, grown", budget.Used(), ub, before)
	}
	// Acknowledge B as it goes until it closes: nothing is lost, and the budget empties.
	total := 0
	after := uint64(0)
	for {
		r, err := m.Read(context.Background(), &protocol.ProcessReadParams{ProcessID: "b", AfterSeq: u64(after), WaitMs: u64(5000)})
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range r.Chunks {
			total += len(c.Chunk)
		}
		after = r.NextSeq - 1
		m.Ack(&protocol.ProcessAckParams{ProcessID: "b", Seq: after})
		if r.Closed {
			break
		}
	}
	if total != bBytes {
		t.Fatalf("B delivered %d bytes, want %d", total, bBytes)
	}
	if got := budget.Used(); got != 0 {
		t.Fatalf("budget used %d after everything was acknowledged, want 0", got)
	}
}

// readUntilClosedNoAck long-polls process/read until id is closed, acknowledging nothing,
// and returns the last result.
func readUntilClosedNoAck(t *testing.T, m *process.Manager, id string) *protocol.ProcessReadResult {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	after := uint64(0)
	for time.Now().Before(deadline) {
		res, err := m.Read(context.Background(), &protocol.ProcessReadParams{ProcessID: id, AfterSeq: u64(after), WaitMs: u64(5000)})
		if err != nil {
			t.Fatalf("Read %s: %v", id, err)
		}
		if res.Closed {
			return res
		}
		after = res.NextSeq - 1
	}
	t.Fatalf("%s did not close", id)
	return nil
}

// TestBudget_LivenessWithThresholdAcks: a client that acknowledges a process only once it
// consumed 768 KiB of it since its last ack (our harness's rule on a flow-controlled
// stream, harness ackEveryBytesFlowControlled, in output bytes), or at its exit and close,
// with a budget far smaller than 4 × 768 KiB: every process still delivers every byte.
// Without the free allowance each process would stop under its threshold with the budget
// exhausted, and no ack would ever come.
func TestBudget_LivenessWithThresholdAcks(t *testing.T) {
	const (
		procs     = 4
		each      = 4 << 20
		threshold = 768 << 10
	)
	budget := process.NewBudget(64 << 10)
	m := newManager(t, &process.Options{UnackedBudget: budget})
	n := newNotifier(4096)
	m.Attach(n)
	for i := range procs {
		p := startParams("p"+strconv.Itoa(i), tmpURI(t), "head", "-c", strconv.Itoa(each), "/dev/zero")
		p.OutputAck = true
		mustStart(t, m, p)
	}
	since := map[string]int{}
	got := map[string]int{}
	closed := 0
	timeout := time.NewTimer(60 * time.Second)
	defer timeout.Stop()
	for closed < procs {
		select {
		case ev := <-n.ch:
			ack := false
			switch ev.method {
			case protocol.MethodProcessOutput:
				got[ev.id] += len(ev.chunk)
				since[ev.id] += len(ev.chunk)
				ack = since[ev.id] >= threshold
			case protocol.MethodProcessClosed:
				closed++
				ack = true
			default:
				ack = true
			}
			if ack {
				since[ev.id] = 0
				m.Ack(&protocol.ProcessAckParams{ProcessID: ev.id, Seq: ev.seq})
			}
		case <-timeout.C:
			t.Fatalf("stalled: delivered %v, budget used %d, queued %d", got, budget.Used(), budget.Queued())
		}
	}
	for i := range procs {
		if id := "p" + strconv.Itoa(i); got[id] != each {
			t.Errorf("%s delivered %d bytes, want %d", id, got[id], each)
		}
	}
	if got := budget.Used(); got != 0 {
		t.Errorf("budget used %d after every close was acknowledged, want 0", got)
	}
}
