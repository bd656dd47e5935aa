package process

import (
	"os"
	"sync"
	"syscall"
	"time"
)

// proc is one entry of the process table, from Starting to eviction.
//
// Lock order: emitMu → Manager.mu → mu → Budget.mu. stdinQueue.mu is a leaf.
type proc struct {
	id        string
	tty       bool
	pipeStdin bool

	// emitMu serialises "assign the next seq" with "push that event to the notifier",
	// so notifications leave in seq order although three goroutines (stdout, stderr,
	// wait) produce events; while Notify blocks on a full connection queue the producing
	// pump blocks too, which is the back-pressure spec/jsonrpc.md §1.6 asks for.
	emitMu sync.Mutex

	// endSpan ends the process's trace span (Observer implementing Span), nil if none:
	// set by start before routineWait runs, called only by routineWait.
	endSpan func(ExitClass)

	// mu guards the state below; it is never held across a blocking call except the
	// kill(2) in terminate/signal, which keeps "exit not yet reaped" and "send a signal
	// to the group" atomic so a recycled pgid is never signalled.
	mu          sync.Mutex
	starting    bool          // spawn in progress (spec/jsonrpc.md §5.2 Starting)
	pgid        int           // child pid = pgid = sid; 0 while starting
	out         outputLog     // retained output
	nextSeq     uint64        // next unassigned seq; starts at 1, shared by output, exit, close
	exited      bool          // the exit event has been assigned its seq
	exitCode    int32         // valid when exited
	exitSignal  int32         // the signal that killed the child, 0 if none; set when reaped
	reaped      bool          // exit status collected: the pid may be reused, never signal it again
	openStreams int           // output streams not yet at EOF
	closed      bool          // the close event has been assigned its seq
	closedAt    time.Time     // when closed became true (retention clock)
	killed      bool          // SIGKILL sent by terminate or Close
	wake        chan struct{} // closed on every new event; nil until a reader waits
	outputs     []*os.File    // output read ends, for drain deadlines; owned by the read routines
	readers     int           // read routines still running
	stopping    bool          // a stop deadline is set on outputs: a deadline error ends a pump
	drainReq    bool          // the exit drain was requested (see requestExitDrainLocked)
	drainLeft   int           // readers yet to acknowledge the exit drain
	drainDone   chan struct{} // closed when drainLeft reaches 0
	stdin       *stdinQueue   // nil unless tty or pipeStdin
	sandboxed   bool          // launched through the sandbox launcher (sandboxType linuxSeccomp); set before spawn
	denied      bool          // sandboxDenied, valid when exited

	// Lossless mode (outputAck, ack.go); ack is nil for released-mode processes.
	ack        *ackState
	budget     *Budget       // charged with ack.budgeted(); nil in released mode and once the Manager closed
	room       chan struct{} // closed when the lossless log frees room or stopping; nil until a reader waits
	sendWake   chan struct{} // closed when the sender may have work; nil until the sender waits
	senderStop bool          // the sender must return (Manager.Close)
}

func newProc(id string, tty, pipeStdin, outputAck bool, opts *Options) *proc {
	p := &proc{
		id:        id,
		tty:       tty,
		pipeStdin: pipeStdin,
		starting:  true,
		nextSeq:   1,
		out:       newOutputLog(opts.MaxRetainedBytes, opts.MaxRetainedChunks),
	}
	if outputAck {
		p.budget = opts.UnackedBudget
		p.out.protect = true
		p.ack = newAckState(ackLimits{
			maxUnackedBytes:  opts.MaxUnackedBytes,
			maxUnackedChunks: opts.MaxRetainedChunks,
			windowEvents:     outputWindowEvents,
			budgetFree:       budgetFreeBytes,
		})
	}
	return p
}

// wakeLocked wakes every process/read waiting on p.
func (p *proc) wakeLocked() {
	if p.wake != nil {
		close(p.wake)
		p.wake = nil
	}
}

// waitChanLocked returns a channel closed at p's next event.
func (p *proc) waitChanLocked() <-chan struct{} {
	if p.wake == nil {
		p.wake = make(chan struct{})
	}
	return p.wake
}

// closeReadyLocked reports whether the close event is due: exit known and every output
// stream at EOF (spec/jsonrpc.md §5.3).
func (p *proc) closeReadyLocked() bool {
	return !p.closed && p.exited && p.openStreams == 0
}

// signalGroupLocked sends sig to p's process group unless its exit has been reaped.
// "No such process" is not an error (the group may consist of a zombie's pgid only).
// It reports whether the signal was sent.
func (p *proc) signalGroupLocked(sig syscall.Signal) (bool, error) {
	if p.starting || p.reaped || p.exited || p.pgid <= 0 {
		return false, nil
	}
	if err := syscall.Kill(-p.pgid, sig); err != nil && err != syscall.ESRCH {
		return false, err
	}
	return true, nil
}

// stopOutputs makes the output pumps stop within d even if an escaped descendant keeps
// the pipes open. A pump that already finished has closed its file; the error is moot.
func (p *proc) stopOutputs(d time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stopping = true
	p.wakeRoomLocked()
	deadline := time.Now().Add(d)
	for _, f := range p.outputs {
		_ = f.SetReadDeadline(deadline)
	}
}

// requestExitDrainLocked asks every running reader to read what the pipes already hold
// and acknowledge, so output written before the exit gets seqs before the exit event.
// It returns the channel closed once all have acknowledged, or nil if none runs.
//
// Mechanism: a read deadline of "now" makes a reader's Read return buffered data first
// and then a deadline error, at which point the pipe is empty; the reader acknowledges,
// clears the deadline and keeps reading (later output follows the exit).
func (p *proc) requestExitDrainLocked() <-chan struct{} {
	if p.readers == 0 || p.stopping || p.drainReq {
		return nil
	}
	p.drainReq = true
	p.wakeRoomLocked() // a lossless reader reads what the pipe holds, coupled or not
	p.drainLeft = p.readers
	p.drainDone = make(chan struct{})
	now := time.Now()
	for _, f := range p.outputs {
		_ = f.SetReadDeadline(now)
	}
	return p.drainDone
}

// ackExitDrainLocked records one reader's acknowledgement; acked is the reader's own flag.
func (p *proc) ackExitDrainLocked(acked *bool) {
	if !p.drainReq || *acked {
		return
	}
	*acked = true
	p.drainLeft--
	if p.drainLeft == 0 {
		close(p.drainDone)
	}
}
