package process

import (
	"testing"

	"github.com/execlab/executor/executor/protocol"
)

// ackFixture drives ackState with a lossless log, as proc does.
type ackFixture struct {
	log    outputLog
	a      *ackState
	next   uint64 // next unassigned seq
	window int    // the attachment's byte window
}

func newAckFixture(lim ackLimits) *ackFixture {
	f := &ackFixture{log: newOutputLog(1<<20, 50_000), a: newAckState(lim), next: 1, window: testWindow}
	f.log.protect = true
	return f
}

func (f *ackFixture) output(n int) uint64 {
	seq := f.next
	f.next++
	f.log.push(retainedChunk{seq: seq, stream: protocol.StreamStdout, data: make([]byte, n)})
	f.a.pushed(n)
	return seq
}

func (f *ackFixture) exit() uint64  { seq := f.next; f.next++; f.a.setExit(seq); return seq }
func (f *ackFixture) close() uint64 { seq := f.next; f.next++; f.a.setClose(seq); return seq }

// sendAll pushes every event the window admits and returns their seqs.
func (f *ackFixture) sendAll() []uint64 {
	var seqs []uint64
	for {
		ev, ok := f.a.next(&f.log, f.next, f.window)
		if !ok {
			return seqs
		}
		f.a.markSent(ev)
		seqs = append(seqs, ev.seq)
	}
}

var testLimits = ackLimits{maxUnackedBytes: 1000, maxUnackedChunks: 10, windowEvents: 4}

// testWindow is the fixtures' byte window (an attachment's).
const testWindow = 300

func TestAckState_WindowBoundsBytesAndEvents(t *testing.T) {
	f := newAckFixture(testLimits)
	for range 6 {
		f.output(100)
	}
	if got := f.sendAll(); len(got) != 3 || got[0] != 1 || got[2] != 3 {
		t.Fatalf("sent %v, want seqs 1..3 (300-byte window)", got)
	}
	f.a.ack(&f.log, 2, f.next)
	if got := f.sendAll(); len(got) != 2 || got[0] != 4 || got[1] != 5 {
		t.Fatalf("after ack 2 sent %v, want 4, 5", got)
	}
	// Small chunks: the event window binds.
	g := newAckFixture(testLimits)
	for range 6 {
		g.output(1)
	}
	if got := g.sendAll(); len(got) != 4 {
		t.Fatalf("sent %d tiny events, want 4 (event window)", len(got))
	}
}

func TestAckState_OversizedChunkMovesAlone(t *testing.T) {
	f := newAckFixture(testLimits)
	f.output(900)
	f.output(10)
	if got := f.sendAll(); len(got) != 1 || got[0] != 1 {
		t.Fatalf("sent %v, want only seq 1 (larger than the window, nothing in flight)", got)
	}
	f.a.ack(&f.log, 1, f.next)
	if got := f.sendAll(); len(got) != 1 || got[0] != 2 {
		t.Fatalf("sent %v, want seq 2", got)
	}
}

func TestAckState_ReadAllowedUntilBound(t *testing.T) {
	f := newAckFixture(testLimits)
	for f.a.readAllowed(&f.log, false) {
		f.output(300)
	}
	if f.log.bytes != 1200 || f.log.n != 4 {
		t.Fatalf("reader stopped at %d bytes / %d chunks, want 1200 / 4 (first read at or past 1000)", f.log.bytes, f.log.n)
	}
	f.sendAll()
	f.a.ack(&f.log, 2, f.next)
	if !f.a.readAllowed(&f.log, false) || f.a.unackedBytes != 600 {
		t.Fatalf("after ack 2: readAllowed %v, unacknowledged %d; want true, 600", f.a.readAllowed(&f.log, false), f.a.unackedBytes)
	}
	// The chunk bound.
	g := newAckFixture(testLimits)
	for g.a.readAllowed(&g.log, false) {
		g.output(1)
	}
	if g.log.n != 10 {
		t.Fatalf("reader stopped at %d chunks, want 10", g.log.n)
	}
}

// TestAckState_AckedStayUnderReleasedBounds: acknowledged chunks are evicted only as the
// released ring evicts (the log's bounds); unacknowledged ones never.
func TestAckState_AckedStayUnderReleasedBounds(t *testing.T) {
	f := newAckFixture(testLimits)
	f.log.maxBytes = 250
	for range 5 {
		f.output(100)
	}
	if f.log.n != 5 {
		t.Fatalf("retained %d chunks over the byte bound with none acknowledged, want 5", f.log.n)
	}
	f.sendAll()
	f.a.ack(&f.log, 3, f.next)
	if f.log.n != 2 || f.log.bytes != 200 {
		t.Fatalf("after ack 3 retained %d chunks / %d bytes, want 2 / 200 (the unacknowledged ones)", f.log.n, f.log.bytes)
	}
	g := newAckFixture(testLimits)
	for range 2 {
		g.output(100)
	}
	g.a.ack(&g.log, 2, g.next)
	if g.log.n != 2 {
		t.Fatalf("acknowledged chunks within the bounds were evicted: %d left, want 2", g.log.n)
	}
}

// TestAckState_CoupledReaderWaitsForTheSender: attached, the reader reads again only once
// the sender has handed everything read to the connection.
func TestAckState_CoupledReaderWaitsForTheSender(t *testing.T) {
	f := newAckFixture(testLimits)
	if !f.a.readAllowed(&f.log, true) {
		t.Fatal("nothing read yet: reading not allowed")
	}
	f.output(100)
	if f.a.readAllowed(&f.log, true) {
		t.Fatal("coupled read allowed with an unsent chunk")
	}
	if !f.a.readAllowed(&f.log, false) {
		t.Fatal("detached read refused under the bounds")
	}
	f.sendAll()
	if f.a.readAllowed(&f.log, true) {
		t.Fatal("coupled read allowed while the sender is still handing the chunk over")
	}
	f.a.sendDone()
	if !f.a.readAllowed(&f.log, true) {
		t.Fatal("coupled read refused after the sender handed everything over")
	}
}

func TestAckState_AttachResendsFromAcked(t *testing.T) {
	f := newAckFixture(testLimits)
	f.output(100)
	f.output(100)
	f.output(100)
	f.sendAll()
	f.a.ack(&f.log, 1, f.next)
	f.a.attached() // the connection broke; 2 and 3 were in flight
	if got := f.sendAll(); len(got) != 2 || got[0] != 2 || got[1] != 3 {
		t.Fatalf("after attach sent %v, want 2, 3 again", got)
	}
}

func TestAckState_StaleClampedAndReadAheadAcks(t *testing.T) {
	f := newAckFixture(testLimits)
	f.output(100)
	f.output(100)
	f.sendAll()
	f.a.ack(&f.log, 2, f.next)
	f.a.ack(&f.log, 1, f.next) // stale
	if f.a.acked != 2 {
		t.Fatalf("acked = %d after a stale ack, want 2", f.a.acked)
	}
	f.a.ack(&f.log, 99, f.next) // beyond the last assigned seq
	if f.a.acked != 2 || f.a.unackedBytes != 0 || f.log.countAfter(2) != 0 {
		t.Fatalf("acked = %d, unacknowledged %d after ack 99 with next 3; want 2, 0", f.a.acked, f.a.unackedBytes)
	}
	// An ack of events never pushed (the client read them with process/read).
	f.output(50)
	f.output(50)
	f.a.ack(&f.log, 3, f.next)
	if f.a.sent != 3 || f.a.inflightBytes != 0 {
		t.Fatalf("sent %d inflight %d after read-ahead ack, want 3, 0", f.a.sent, f.a.inflightBytes)
	}
	if got := f.sendAll(); len(got) != 1 || got[0] != 4 {
		t.Fatalf("sent %v, want 4", got)
	}
}

func TestAckState_ExitAndCloseInOrder(t *testing.T) {
	f := newAckFixture(testLimits)
	f.output(10)
	exit := f.exit()
	f.output(10) // a grandchild's output after the exit
	closeSeq := f.close()
	var kinds []ackEventKind
	for {
		ev, ok := f.a.next(&f.log, f.next, f.window)
		if !ok {
			break
		}
		f.a.markSent(ev)
		kinds = append(kinds, ev.kind)
	}
	want := []ackEventKind{ackEventOutput, ackEventExit, ackEventOutput, ackEventClose}
	if len(kinds) != len(want) {
		t.Fatalf("kinds %v, want %v", kinds, want)
	}
	for i := range want {
		if kinds[i] != want[i] {
			t.Fatalf("kinds %v, want %v", kinds, want)
		}
	}
	if f.a.ack(&f.log, exit, f.next) {
		t.Fatal("ack of the exit reported the close acknowledged")
	}
	if !f.a.ack(&f.log, closeSeq, f.next) || !f.a.closeAckedState() {
		t.Fatal("ack of the close not reported")
	}
	if f.a.ack(&f.log, closeSeq, f.next) {
		t.Fatal("a repeated close ack reported again")
	}
}
