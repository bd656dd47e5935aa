package process

import (
	"errors"
	"os"
	"syscall"
	"time"

	"github.com/execlab/executor/executor/protocol"
)

// Event production. Three kinds of goroutine per process produce events, all owned by
// the Manager (m.wg) and all finished once the process is closed or Close has run:
//
//	routineRead  (×2 with pipes, ×1 with a PTY): read → retain → notify, until EOF
//	routineWait  reap the child → exit event → maybe close event
//	routineStdin (stdinQueue.run): drain process/write chunks into the child's stdin
//
// Every event takes p.emitMu for "assign seq + notify", see proc.emitMu.

// routineRead pumps one output stream until EOF, a read error, or a drain deadline.
func (m *Manager) routineRead(p *proc, f *os.File, stream protocol.ExecOutputStream) {
	defer m.wg.Done()
	acked := false // this reader acknowledged the exit drain
	size := initialReadSize
	rb := getReadBuf(size) // the buffer the next read fills; not referenced by anyone yet
	defer func() { rb.putUnused() }()
	var ticket budgetTicket        // this reader's place in the Budget (lossless mode)
	defer p.budget.cancel(&ticket) // nil-safe; p.budget is set before the reader starts
	for {
		if !m.waitRoom(p, &ticket) {
			break // stopping while the lossless log was full
		}
		n, err := f.Read(rb.b)
		if n > 0 {
			full := n == len(rb.b)
			var data []byte
			var kept *readBuf
			if n < len(rb.b)/compactBelow {
				data = append([]byte(nil), rb.b[:n]...) // rb is reused
				if size > initialReadSize {
					size /= 2 // reads fill less than half: a smaller buffer will do
					rb.putUnused()
					rb = getReadBuf(size)
				}
			} else {
				data, kept = rb.b[:n:n], rb // retained as is; the next read gets another buffer
				if full && size < readBufferSize {
					size *= 2 // a full read: the child writes fast, read more at once
				}
				rb = getReadBuf(size)
			}
			m.opts.Observer.OutputBytes(n)
			m.emitOutput(p, stream, data, kept)
			if err == nil && pauseAfterRead(n, full) {
				time.Sleep(flowPause) // output flows: let the pipe fill
			}
		}
		if err != nil {
			if errors.Is(err, os.ErrDeadlineExceeded) {
				p.mu.Lock()
				if !p.stopping {
					// Exit drain: the pipe is empty now. Acknowledge and go on.
					p.ackExitDrainLocked(&acked)
					_ = f.SetReadDeadline(time.Time{})
					p.mu.Unlock()
					continue
				}
				p.mu.Unlock()
			}
			// io.EOF (pipes), EIO (PTY: every slave fd closed), a stop deadline, or
			// os.ErrClosed: all end the stream.
			break
		}
	}
	_ = f.Close()
	p.mu.Lock()
	p.readers--
	p.ackExitDrainLocked(&acked)
	p.mu.Unlock()
	m.finishStream(p)
}

// pauseAfterRead reports whether the pump pauses flowPause before its next read: the
// read of n bytes took at least flowingReadBytes (the child writes in bulk) without
// filling the buffer (the pump caught up with it). A full read reads again at once; a
// short one (interactive output) is not delayed. Without the pause a pump that is
// faster than its child reads each of the child's writes as it comes, and every few
// KiB become one notification, one socket write and, with outputAck, one ack to read
// (issue 16: ~6 KiB chunks on a loaded machine cost 2–3× the CPU per byte).
func pauseAfterRead(n int, full bool) bool { return !full && n >= flowingReadBytes }

// routineWait reaps the child and records its exit.
func (m *Manager) routineWait(p *proc, child *os.Process) {
	defer m.wg.Done()
	code, sig := int32(-1), int32(0)
	if st, err := child.Wait(); err == nil {
		ws := st.Sys().(syscall.WaitStatus)
		code = exitCode(ws, p.tty)
		if ws.Signaled() {
			sig = int32(ws.Signal())
		}
	}
	p.mu.Lock()
	p.reaped = true
	p.exitSignal = sig
	killed := p.killed
	drained := p.requestExitDrainLocked()
	p.mu.Unlock()
	if drained != nil {
		t := time.NewTimer(exitDrainTimeout)
		select {
		case <-drained:
		case <-t.C:
		}
		t.Stop()
	}
	denied := m.classifyExit(p, code)
	class := exitClass(code, sig, denied)
	m.opts.Observer.ProcessExited(class)
	if p.endSpan != nil {
		p.endSpan(class)
	}
	m.emitExit(p, code, denied)
	if killed {
		p.stopOutputs(terminateDrain)
	}
}

// exitCode maps a wait status to the wire exit code (spec/jsonrpc.md §5.4): the exit
// status, or for a signal death 128+N with pipes and 1 with a PTY.
func exitCode(ws syscall.WaitStatus, tty bool) int32 {
	switch {
	case ws.Exited():
		return int32(ws.ExitStatus())
	case ws.Signaled():
		if tty {
			return ptySignalExitCode
		}
		return signalExitBase + int32(ws.Signal())
	}
	return -1
}

// emitOutput numbers and retains one chunk, then notifies it (released mode) or wakes
// the sender (outputAck). rb, when not nil, is data's pooled buffer: the log takes it.
func (m *Manager) emitOutput(p *proc, stream protocol.ExecOutputStream, data []byte, rb *readBuf) {
	p.emitMu.Lock()
	defer p.emitMu.Unlock()
	p.mu.Lock()
	seq := p.nextSeq
	p.nextSeq++
	rb.retain() // the log's reference, dropped when the chunk is evicted
	rb.retain() // the notification's, dropped below once Notify has encoded it
	p.out.push(retainedChunk{seq: seq, stream: stream, data: data, buf: rb})
	p.wakeLocked()
	if p.ack != nil {
		before := p.ack.budgeted()
		p.ack.pushed(len(data))
		p.budget.charge(p.ack.budgeted() - before)
		p.wakeSenderLocked() // the sender pushes it (ack.go)
		rb.release()         // routineSend takes its own reference
		p.mu.Unlock()
		return
	}
	p.mu.Unlock()
	m.notify(protocol.MethodProcessOutput, &protocol.ProcessOutputNotification{
		ProcessID: p.id, Seq: seq, Stream: stream, Chunk: data,
	})
	if rb != nil {
		p.mu.Lock()
		rb.release()
		p.mu.Unlock()
	}
}

func (m *Manager) emitExit(p *proc, code int32, denied bool) {
	p.emitMu.Lock()
	defer p.emitMu.Unlock()
	p.mu.Lock()
	seq := p.nextSeq
	p.nextSeq++
	p.exited = true
	p.exitCode = code
	p.denied = denied
	p.wakeLocked()
	if p.ack != nil {
		p.ack.setExit(seq)
		p.wakeSenderLocked()
		p.mu.Unlock()
		m.maybeEmitCloseEmitLocked(p)
		return
	}
	p.mu.Unlock()
	m.notify(protocol.MethodProcessExited, &protocol.ProcessExitedNotification{
		ProcessID: p.id, Seq: seq, ExitCode: code, SandboxDenied: denied,
	})
	m.maybeEmitCloseEmitLocked(p)
}

func (m *Manager) finishStream(p *proc) {
	p.emitMu.Lock()
	defer p.emitMu.Unlock()
	p.mu.Lock()
	p.openStreams--
	p.wakeLocked() // classifyExit waits for the last EOF
	p.mu.Unlock()
	m.maybeEmitCloseEmitLocked(p)
}

// maybeEmitCloseEmitLocked emits the close event once it is due. p.emitMu must be held.
func (m *Manager) maybeEmitCloseEmitLocked(p *proc) {
	p.mu.Lock()
	if !p.closeReadyLocked() {
		p.mu.Unlock()
		return
	}
	seq := p.nextSeq
	p.nextSeq++
	p.closed = true
	now := time.Now()
	p.closedAt = now
	p.wakeLocked()
	q := p.stdin
	lossless := p.ack != nil
	if lossless {
		p.ack.setClose(seq)
		p.wakeSenderLocked()
	}
	p.mu.Unlock()
	if q != nil {
		q.stop() // nothing can read stdin meaningfully any more; frees the writer goroutine
	}
	if lossless {
		return // retention starts when the close is acknowledged (Manager.Ack)
	}
	m.noteClosed(p, now)
	m.notify(protocol.MethodProcessClosed, &protocol.ProcessClosedNotification{ProcessID: p.id, Seq: seq})
}
