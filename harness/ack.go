package harness

// Acknowledged output (docs/reliability.md, capability processOutputAck).
//
// StartProcess opts a process in with process/start's outputAck when the executor
// advertised the flag. From then on the Client tells the executor, with process/ack
// notifications, which events its consumer has taken: the executor keeps every event until
// then (nothing is lost across a reconnect) and pushes at most a window of unacknowledged
// output (a slow consumer stops the executor's sending instead of filling buffers).
//
// When acks go out:
//   - every ackEveryBytes of consumed notification bytes or ackEveryEvents events, a
//     quarter of the executor's default window or less: the executor stops only with a
//     full window in flight, whose consumption always crosses a threshold, so a window
//     never stalls (liveness) while acks stay few (one per 256 KiB at full speed);
//   - on a connection whose transport is flow-controlled (a relay stream running ARQ v1,
//     where our executor's window is 6 MiB), every ackEveryBytesFlowControlled (1 MiB)
//     instead: a quarter as many acks, each a message through the rendezvous both ways.
//     Should the executor still use its 2 MiB window there, a full window (at least
//     1.75 MiB of output, 2.3 MiB as notifications) still crosses it;
//   - at once for the exit and the close (the executor then frees the process).
// A quiet process's last few events may stay unacknowledged until more come; the executor
// keeps them (a few bytes) and resends them after a reconnect, where they are dropped as
// duplicates.
// After a session recovery, sessionConn re-sends the last ack of every process (an ack
// written on a connection that broke may have been lost).

import (
	"encoding/json"
	"strconv"
	"sync"

	"github.com/execlab/executor/executor/protocol"
	"github.com/execlab/executor/jsonwire"
)

// outputAcks tracks the processes started with outputAck and what of them was consumed.
// Safe for concurrent use: the delivery path consumes while StartProcess registers and a
// recovery reads.
type outputAcks struct {
	// mu guards procs and everyBytes; never held while writing.
	mu    sync.Mutex
	procs map[string]*ackedProc
	// everyBytes is the byte threshold on the current connection: ackEveryBytes, or
	// ackEveryBytesFlowControlled (setFlowControlled).
	everyBytes int
}

// ackedProc is one process's consumption.
type ackedProc struct {
	consumed procState // seqs consumed
	lastAck  uint64    // the last seq acknowledged
	bytes    int       // notification bytes consumed since lastAck
	events   int       // events consumed since lastAck
}

func newOutputAcks() *outputAcks {
	return &outputAcks{procs: make(map[string]*ackedProc), everyBytes: ackEveryBytes}
}

// setFlowControlled records whether the current connection's transport is flow-controlled
// (flowControlled): it picks the byte threshold for the acks that follow.
func (a *outputAcks) setFlowControlled(on bool) {
	a.mu.Lock()
	a.everyBytes = ackEveryBytes
	if on {
		a.everyBytes = ackEveryBytesFlowControlled
	}
	a.mu.Unlock()
}

// add registers pid before its process/start is sent (events may precede the reply).
func (a *outputAcks) add(pid string) {
	a.mu.Lock()
	a.procs[pid] = &ackedProc{}
	a.mu.Unlock()
}

// remove forgets pid (its start failed).
func (a *outputAcks) remove(pid string) {
	a.mu.Lock()
	delete(a.procs, pid)
	a.mu.Unlock()
}

// has reports whether pid was started with outputAck.
func (a *outputAcks) has(pid string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.procs[pid] != nil
}

// consumption is what the ack bookkeeping needs of one notification, read from it before
// it is handed to the consumer: a consumer may release the notification's storage
// (Notification.Release) as soon as it has it.
type consumption struct {
	terminal bool // process/exited or process/closed
	closed   bool // process/closed
	pid      string
	seq      uint64
	size     int
	ok       bool // a process/* notification of a process started with outputAck
}

// inspect reads what consumed will need of n. It reads n only when some process was
// started with outputAck.
func (a *outputAcks) inspect(n Notification) consumption {
	switch n.Method {
	case protocol.MethodProcessOutput, protocol.MethodProcessExited, protocol.MethodProcessClosed:
	default:
		return consumption{}
	}
	a.mu.Lock()
	none := len(a.procs) == 0
	a.mu.Unlock()
	if none {
		return consumption{}
	}
	var (
		pid string
		seq uint64
		ok  bool
	)
	if n.walkable() {
		pid, seq, ok = processIDSeq(n.Params)
	}
	return consumption{
		terminal: n.Method != protocol.MethodProcessOutput,
		closed:   n.Method == protocol.MethodProcessClosed,
		pid:      pid, seq: seq, size: len(n.Params), ok: ok,
	}
}

// consumed records that n was handed to the consumer. It returns the ack to send, if one
// is due (nil otherwise).
func (a *outputAcks) consumed(n Notification) []byte { return a.consumedInfo(a.inspect(n)) }

// consumedInfo is consumed for what inspect read of the notification beforehand.
func (a *outputAcks) consumedInfo(u consumption) []byte {
	if !u.ok {
		return nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	p := a.procs[u.pid]
	if p == nil || p.consumed.delivered(u.seq) {
		return nil
	}
	p.consumed.mark(u.seq)
	p.bytes += u.size
	p.events++
	if !u.terminal && p.bytes < a.everyBytes && p.events < ackEveryEvents {
		return nil
	}
	if p.consumed.watermark <= p.lastAck {
		return nil
	}
	p.lastAck, p.bytes, p.events = p.consumed.watermark, 0, 0
	msg := ackMessage(u.pid, p.lastAck)
	if u.closed && p.lastAck >= u.seq {
		delete(a.procs, u.pid) // nothing follows a close
	}
	return msg
}

// snapshot returns an ack for every process with something consumed, for a recovery.
func (a *outputAcks) snapshot() [][]byte {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out [][]byte
	for pid, p := range a.procs {
		if p.consumed.watermark > 0 {
			out = append(out, ackMessage(pid, p.consumed.watermark))
		}
	}
	return out
}

// processIDSeq reads processId and seq from process event params (walkable), stopping as
// soon as both are known: our executor and the reference write them before the (large)
// chunk, so an output notification is not scanned twice.
func processIDSeq(params []byte) (pid string, seq uint64, ok bool) {
	var havePID, haveSeq bool
	jsonwire.ObjectMembers(params, func(k, v []byte) bool {
		var err error
		switch string(k) {
		case "processId":
			pid, err = jsonwire.String(v)
			havePID = err == nil
		case "seq":
			seq, haveSeq = parseJSONUint(v)
		}
		return !havePID || !haveSeq
	})
	return pid, seq, havePID && haveSeq
}

// ackMessage encodes a process/ack notification.
func ackMessage(pid string, seq uint64) []byte {
	b := make([]byte, 0, 64+len(pid))
	b = append(b, `{"method":"process/ack","params":{"processId":`...)
	q, _ := json.Marshal(pid) // a string always marshals
	b = append(b, q...)
	b = append(b, `,"seq":`...)
	b = strconv.AppendUint(b, seq, 10)
	return append(b, `}}`...)
}
