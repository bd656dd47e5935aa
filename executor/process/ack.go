package process

import (
	"time"

	"github.com/execlab/executor/executor/protocol"
)

// Lossless output (docs/reliability.md §4): the I/O around the pure ackState.
//
// A process started with outputAck differs from a released-mode one in three places only:
//
//	routineRead   waits in waitRoom before each read while the unacknowledged output is at
//	              its bound (back-pressure: the child blocks in write(2)); emitOutput,
//	              emitExit and the close only assign a seq, retain, and wake the sender.
//	routineSend   (one per such process) pushes retained events in seq order while attached
//	              and inside the window; it is the only notifier of the process.
//	Ack           (the process/ack notification) frees acknowledged events and reopens
//	              the window; the close's acknowledgement starts the closed retention.
//
// Attach resets every such process's send position to its acknowledged one.

// waitRoom blocks a reader of a lossless process while its log is full or, attached, while
// the sender has not taken what was read (ackState.readAllowed), and then while the
// executor's Budget is exhausted (t is the reader's place in it). It reports false when
// the pumps are stopping (terminate, Close): the reader then ends its stream.
//
// A wait that began at the unacknowledged bound or at the budget is reported as
// QueueOutputBound back-pressure once it ends; the coupled waits of an attached reader
// (the ordinary rhythm of every chunk) are not.
func (m *Manager) waitRoom(p *proc, t *budgetTicket) bool {
	var boundSince time.Time // set when a wait at the bound or the budget begins
	for {
		p.mu.Lock()
		if p.ack == nil {
			p.mu.Unlock()
			return true
		}
		coupled := m.attached.Load() != nil && !p.drainReq
		var budgetWait <-chan struct{} // the budget's grant, when only the budget holds the reader
		if p.ack.readAllowed(&p.out, coupled) {
			ok, wait := true, (<-chan struct{})(nil)
			if p.ack.needsBudget() {
				ok, wait = p.budget.admit(t)
			} else {
				p.budget.cancel(t) // under its free allowance: no place in the queue needed
			}
			if ok {
				p.mu.Unlock()
				if !boundSince.IsZero() {
					m.opts.Observer.Backpressure(QueueOutputBound, time.Since(boundSince))
				}
				return true
			}
			budgetWait = wait
			if boundSince.IsZero() {
				boundSince = time.Now()
			}
		} else {
			p.budget.cancel(t) // the process's own state holds the reader: no place in the queue
			if boundSince.IsZero() && p.ack.atBound(&p.out) {
				boundSince = time.Now()
			}
		}
		if p.stopping {
			p.budget.cancel(t)
			p.mu.Unlock()
			return false
		}
		if p.room == nil {
			p.room = make(chan struct{})
		}
		ch := p.room
		p.mu.Unlock()
		select {
		case <-ch:
		case <-budgetWait: // nil unless queued: blocks forever
		}
	}
}

// wakeRoomLocked wakes a reader waiting in waitRoom.
func (p *proc) wakeRoomLocked() {
	if p.room != nil {
		close(p.room)
		p.room = nil
	}
}

// wakeSenderLocked wakes routineSend.
func (p *proc) wakeSenderLocked() {
	if p.sendWake != nil {
		close(p.sendWake)
		p.sendWake = nil
	}
}

// routineSend pushes a lossless process's events. Owner: the Manager (m.wg); it returns
// once the close event is acknowledged or Close stops it.
//
// A wait with an event ready while attached (the window full) is reported as
// QueueOutputWindow back-pressure once the event goes out.
func (m *Manager) routineSend(p *proc) {
	defer m.wg.Done()
	for {
		p.mu.Lock()
		var (
			ev          ackEvent
			a           *attachment
			windowSince time.Time // set when a wait with a ready event begins
		)
		for {
			if p.senderStop || p.ack.closeAckedState() {
				p.mu.Unlock()
				return
			}
			// The attachment is loaded under p.mu: Attach resets the send position under
			// p.mu after swapping it, so an event picked for an old attachment is pushed
			// again on the new one.
			if a = m.attached.Load(); a != nil {
				var ok bool
				if ev, ok = p.ack.next(&p.out, p.nextSeq, a.window); ok {
					p.ack.markSent(ev)
					break
				}
				if windowSince.IsZero() && p.ack.pending(p.nextSeq) {
					windowSince = time.Now()
				}
			} else {
				windowSince = time.Time{} // detached: not the window's wait
			}
			if p.sendWake == nil {
				p.sendWake = make(chan struct{})
			}
			ch := p.sendWake
			p.mu.Unlock()
			<-ch
			p.mu.Lock()
		}
		method, params := p.ackEventMessageLocked(ev)
		var rb *readBuf // the chunk's pooled buffer, referenced until Notify has encoded it
		if ev.chunk != nil {
			rb = ev.chunk.buf
			rb.retain()
		}
		p.mu.Unlock()
		if !windowSince.IsZero() {
			m.opts.Observer.Backpressure(QueueOutputWindow, time.Since(windowSince))
		}
		if err := a.n.Notify(a.ctx, method, params); err != nil {
			m.log.Debug("notification dropped; resent after the next attach", "method", method, "error", err)
		}
		p.mu.Lock()
		rb.release()
		p.ack.sendDone()
		p.wakeRoomLocked() // a coupled reader waits for this
		p.mu.Unlock()
	}
}

// ackEventMessageLocked builds the notification of ev.
func (p *proc) ackEventMessageLocked(ev ackEvent) (string, any) {
	switch ev.kind {
	case ackEventExit:
		return protocol.MethodProcessExited, &protocol.ProcessExitedNotification{
			ProcessID: p.id, Seq: ev.seq, ExitCode: p.exitCode, SandboxDenied: p.denied,
		}
	case ackEventClose:
		return protocol.MethodProcessClosed, &protocol.ProcessClosedNotification{ProcessID: p.id, Seq: ev.seq}
	}
	return protocol.MethodProcessOutput, &protocol.ProcessOutputNotification{
		ProcessID: p.id, Seq: ev.seq, Stream: ev.chunk.stream, Chunk: ev.chunk.data,
	}
}

// Ack applies a process/ack notification (docs/reliability.md): every event of the
// process with a seq ≤ params.Seq was consumed. Unknown ids and released-mode processes
// are ignored, as are stale acks. It never blocks on I/O: it runs on the connection's
// read loop.
func (m *Manager) Ack(params *protocol.ProcessAckParams) {
	p := m.lookup(params.ProcessID)
	if p == nil {
		return
	}
	p.mu.Lock()
	if p.ack == nil || p.starting {
		p.mu.Unlock()
		return
	}
	before := p.ack.budgeted()
	closeAcked := p.ack.ack(&p.out, params.Seq, p.nextSeq)
	p.budget.release(before - p.ack.budgeted())
	p.wakeRoomLocked()
	p.wakeSenderLocked()
	p.mu.Unlock()
	if closeAcked {
		m.noteClosed(p, time.Now())
	}
}

// resetAcks is Attach's part for lossless processes: resend from the acknowledged
// position on the new attachment (called after the swap). With stop (Close) every sender
// returns.
func (m *Manager) resetAcks(stop bool) {
	m.mu.Lock()
	procs := m.procsLocked()
	m.mu.Unlock()
	for _, p := range procs {
		p.mu.Lock()
		if p.ack != nil {
			p.ack.attached()
			if stop {
				p.senderStop = true
			}
			p.wakeSenderLocked()
			p.wakeRoomLocked() // coupling changes with the attachment
		}
		p.mu.Unlock()
	}
}
