package process_test

import (
	"context"
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

// TestBudget_SharedAcrossSessions: two sessions (Managers) share one budget. A's detached
// process fills it and stops; B's, started next, reads nothing at all (its readers queue).
// Acknowledging A's output frees budget and B resumes; when A's session ends (Close: a
// session's expiry) A's whole share returns and B alone fills the budget; when B's ends the
// budget is empty. The budget is never exceeded by more than one read per output stream.
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
	// A's stdout reader, then B's stdout and stderr readers: B never got to read.
	waitBudget(t, budget, "B's readers to queue", func(_, queued int) bool { return queued == 3 })
	if got, _ := unacked(t, mb, "b"); got != 0 {
		t.Fatalf("B retained %d bytes with the budget exhausted, want 0", got)
	}
	usedA := budget.Used()
	if gotA, _ := unacked(t, ma, "a"); gotA != usedA {
		t.Fatalf("budget used %d, want A's unacknowledged %d", usedA, gotA)
	}

	// Acknowledge all of A's output: the release grants every queued reader, B included.
	_, lastA := unacked(t, ma, "a")
	ma.Ack(&protocol.ProcessAckParams{ProcessID: "a", Seq: lastA})
	waitOutputAfter(t, mb, "b", 0)

	// Both run until the budget is full again; then A's session ends.
	waitBudget(t, budget, "A and B to fill the budget", full)
	ma.Close()
	// A's share is back: B (blocked behind the budget, or reading on with A's share) is
	// all the budget holds once it stops again.
	waitBudget(t, budget, "B to fill the budget alone", full)
	if gotB, _ := unacked(t, mb, "b"); gotB != budget.Used() {
		t.Fatalf("budget used %d with A's session closed, want B's unacknowledged %d", budget.Used(), gotB)
	}

	mb.Close()
	if got := budget.Used(); got != 0 {
		t.Fatalf("budget used %d after every session closed, want 0", got)
	}
}

// TestBudget_ExitAndAckReturnShare: a process that exits keeps its unacknowledged output
// (it is owed to the client) until it is acknowledged; acknowledging it through the close
// returns the whole share, and the process blocked behind it finishes.
func TestBudget_ExitAndAckReturnShare(t *testing.T) {
	budget := process.NewBudget(budgetTestTotal)
	m := newManager(t, &process.Options{UnackedBudget: budget})
	// A writes half the budget and exits; B then fills the rest and blocks.
	pa := startParams("a", tmpURI(t), "head", "-c", "524288", "/dev/zero")
	pa.OutputAck = true
	mustStart(t, m, pa)
	res := readUntilClosedNoAck(t, m, "a")
	if !res.Closed || res.ExitCode == nil || *res.ExitCode != 0 {
		t.Fatalf("A: %+v, want closed with exit 0", res)
	}
	if got := budget.Used(); got != 524288 {
		t.Fatalf("budget used %d after A exited unacknowledged, want its 524288 bytes", got)
	}
	pb := startParams("b", tmpURI(t), "head", "-c", "2097152", "/dev/zero")
	pb.OutputAck = true
	mustStart(t, m, pb)
	waitBudget(t, budget, "B to fill the budget", func(used, queued int) bool { return used >= budgetTestTotal && queued >= 1 })

	before, _ := unacked(t, m, "b")
	// Acknowledge A through its close: its share returns, B reads on into it.
	m.Ack(&protocol.ProcessAckParams{ProcessID: "a", Seq: res.NextSeq - 1})
	waitBudget(t, budget, "B to fill the budget alone", func(used, queued int) bool { return used >= budgetTestTotal && queued >= 1 })
	if gotB, _ := unacked(t, m, "b"); gotB != budget.Used() || gotB <= before {
		t.Fatalf("budget used %d, B unacknowledged %d (before A's ack: %d); want B alone, grown", budget.Used(), gotB, before)
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
	if total != 2097152 {
		t.Fatalf("B delivered %d bytes, want 2097152", total)
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
