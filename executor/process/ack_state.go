package process

// Lossless output for processes started with outputAck (docs/reliability.md §4).
//
// ackState is a pure state machine: no locks (its owner, proc, guards it with proc.mu), no
// goroutines, no clock, no I/O. Its inputs are "an event was assigned a seq" (the chunk
// itself goes into the proc's outputLog, which ackState reads but does not own), "the
// client acknowledged seq", "the attachment changed" and "this event was pushed"; its
// outputs are "may the reader read more" and "which event to push next".
//
// Seq space, for one process (spec/jsonrpc.md §5.3: one counter for output, exit, close):
//
//	 1 … acked           acknowledged: freed (trimmed from the log)
//	 acked+1 … sent      pushed on the current attachment, not yet acknowledged (in flight)
//	 sent+1 … next−1     assigned, retained, not yet pushed
//	 next …              not yet assigned
//
// Invariants: acked ≤ sent ≤ next−1; inflightBytes = output bytes in (acked, sent];
// unackedBytes = output bytes above acked; the log holds every chunk above acked
// (protected) and, under the released bounds, acknowledged ones too (process/read).

// ackLimits bound one process in lossless mode. All are positive. The byte window is not
// among them: it belongs to the attachment (Manager.Attach, AttachFlowControlled) and is
// passed to next.
type ackLimits struct {
	maxUnackedBytes  int // retained bytes at which the reader stops reading
	maxUnackedChunks int // retained chunks at which the reader stops reading
	windowEvents     int // events pushed and not yet acknowledged
	budgetFree       int // unacknowledged bytes held outside the executor's Budget (budgetFreeBytes)
}

// ackState is the lossless-mode state of one process.
type ackState struct {
	lim ackLimits

	acked         uint64 // every seq ≤ acked was acknowledged
	sent          uint64 // every seq ≤ sent was pushed on the current attachment
	inflightBytes int    // output bytes in (acked, sent]
	unackedBytes  int    // output bytes above acked

	sending bool // an event is being handed to the connection (markSent … sendDone)

	exitSeq  uint64 // seq of the exit event, 0 until assigned
	closeSeq uint64 // seq of the close event, 0 until assigned
}

// ackEventKind says what a pending event is.
type ackEventKind uint8

const (
	ackEventOutput ackEventKind = iota + 1
	ackEventExit
	ackEventClose
)

// ackEvent is the next event to push: its seq and kind; chunk is set for output (shared
// with the log, never modified).
type ackEvent struct {
	seq   uint64
	kind  ackEventKind
	chunk *retainedChunk
}

func newAckState(lim ackLimits) *ackState { return &ackState{lim: lim} }

// readAllowed reports whether the reader may read another chunk from the child: the
// retained (unacknowledged) output is under both bounds, and, when coupled (attached, no
// exit drain), everything read so far has been handed to the connection. Coupling keeps
// the released pump's rhythm while a client is attached: the reader waits while the
// sender is behind or still encoding and writing the last event, the pipe fills meanwhile
// and the next read is large (without it a
// fast reader cuts the stream into small chunks, each a notification). Detached, the
// reader runs ahead up to the bounds, so the child keeps running through an outage.
func (a *ackState) readAllowed(log *outputLog, coupled bool) bool {
	if a.atBound(log) {
		return false
	}
	return !coupled || (a.unackedBytes == a.inflightBytes && !a.sending)
}

// atBound reports whether the retained (unacknowledged) output has reached either bound:
// the reader must wait for acknowledgements, whatever the coupling.
func (a *ackState) atBound(log *outputLog) bool {
	return a.unackedBytes >= a.lim.maxUnackedBytes || log.countAfter(a.acked) >= a.lim.maxUnackedChunks
}

// budgeted returns the unacknowledged bytes the process holds against the executor's
// Budget: those above its free allowance.
func (a *ackState) budgeted() int { return max(0, a.unackedBytes-a.lim.budgetFree) }

// needsBudget reports whether the next read must be admitted by the Budget: the
// process's unacknowledged output has reached its free allowance.
func (a *ackState) needsBudget() bool { return a.unackedBytes >= a.lim.budgetFree }

// pending reports whether an assigned event (seq < nextSeq) has not been pushed yet.
func (a *ackState) pending(nextSeq uint64) bool { return a.sent+1 < nextSeq }

// pushed records an output chunk of n bytes retained in the log.
func (a *ackState) pushed(n int) { a.unackedBytes += n }

// setExit and setClose record the seqs of the terminal events when they are assigned.
func (a *ackState) setExit(seq uint64)  { a.exitSeq = seq }
func (a *ackState) setClose(seq uint64) { a.closeSeq = seq }

// next returns the event to push after sent, if one is assigned (seq < nextSeq) and the
// window (windowBytes of output, the attachment's, and lim.windowEvents) has room for it.
// The window always admits one event when nothing is in flight, so a chunk larger than
// the window still moves.
func (a *ackState) next(log *outputLog, nextSeq uint64, windowBytes int) (ackEvent, bool) {
	seq := a.sent + 1
	if seq >= nextSeq {
		return ackEvent{}, false
	}
	inflightEvents := int(a.sent - a.acked)
	if inflightEvents >= a.lim.windowEvents {
		return ackEvent{}, false
	}
	switch seq {
	case a.exitSeq:
		return ackEvent{seq: seq, kind: ackEventExit}, true
	case a.closeSeq:
		return ackEvent{seq: seq, kind: ackEventClose}, true
	}
	c := log.find(seq)
	if c == nil {
		// Cannot happen: a lossless log keeps every unacknowledged chunk, and seqs other
		// than exit and close are chunks. Push nothing rather than skip a seq.
		return ackEvent{}, false
	}
	if inflightEvents > 0 && a.inflightBytes+len(c.data) > windowBytes {
		return ackEvent{}, false
	}
	return ackEvent{seq: seq, kind: ackEventOutput, chunk: c}, true
}

// markSent records that ev (returned by next) is being handed to the connection; sendDone
// follows once it was.
func (a *ackState) markSent(ev ackEvent) {
	a.sending = true
	a.sent = ev.seq
	if ev.chunk != nil {
		a.inflightBytes += len(ev.chunk.data)
	}
}

// sendDone records that the event of the last markSent was handed over.
func (a *ackState) sendDone() { a.sending = false }

// ack applies an acknowledgement of every seq ≤ seq. A seq beyond the last assigned one
// (nextSeq−1) is clamped; a stale or repeated one changes nothing. It unprotects them and
// reports whether the close event is now acknowledged for the first time. The log must
// still hold every chunk above the old acked (it protects them).
func (a *ackState) ack(log *outputLog, seq, nextSeq uint64) (closeAcked bool) {
	seq = min(seq, nextSeq-1)
	if seq <= a.acked {
		return false
	}
	wasClosed := a.closeAckedState()
	a.unackedBytes -= log.bytesBetween(a.acked, seq)
	a.acked = seq
	log.setProtectAfter(seq)
	if a.sent < a.acked {
		a.sent = a.acked // the client got them another way (process/read)
	}
	a.inflightBytes = log.bytesBetween(a.acked, a.sent)
	return !wasClosed && a.closeAckedState()
}

// attached resets the send position to the acknowledged one: whatever was pushed on an
// earlier attachment and not acknowledged is pushed again.
func (a *ackState) attached() {
	a.sent = a.acked
	a.inflightBytes = 0
}

// closeAckedState reports whether the close event has been acknowledged: nothing is
// left to push or retain.
func (a *ackState) closeAckedState() bool { return a.closeSeq != 0 && a.acked >= a.closeSeq }
