package harness

import (
	"encoding/json"
	"fmt"

	"github.com/execlab/executor/executor/protocol"
)

// MethodOutputGap is the method of the notification the SDK itself synthesizes when it can
// prove that events of a process are lost (docs/reliability.md §6): a session recovery
// found them evicted by an executor that does not keep unacknowledged output (a released
// one). It never travels on the wire.
//
//	{"method":"harness/outputGap","params":{"processId":"p","seq":5,"lastSeq":9}}
//	{"method":"harness/outputGap","params":{"processId":"p","seq":5,"final":true}}
//
// seq…lastSeq are the lost seqs. final means the process itself is gone (the executor no
// longer knows it): nothing else will come, the exit status included.
const MethodOutputGap = "harness/outputGap"

// OutputGap is the decoded params of a harness/outputGap notification.
type OutputGap struct {
	ProcessID string `json:"processId"`
	Seq       uint64 `json:"seq"`
	LastSeq   uint64 `json:"lastSeq,omitempty"`
	Final     bool   `json:"final,omitempty"`
}

// OutputGap decodes a harness/outputGap notification.
func (n Notification) OutputGap() (OutputGap, error) {
	var g OutputGap
	if n.Method != MethodOutputGap {
		return g, fmt.Errorf("decoding %s: notification is %s", MethodOutputGap, n.Method)
	}
	err := n.Unmarshal(&g)
	return g, err
}

// gapNotification builds a synthesized harness/outputGap message.
func gapNotification(g OutputGap) []byte {
	b, _ := json.Marshal(map[string]any{"method": MethodOutputGap, "params": g})
	return b
}

// EventKind is the kind of a ProcessEvent.
type EventKind uint8

const (
	// EventOutput is a chunk of output (process/output).
	EventOutput EventKind = iota + 1
	// EventExited is the exit (process/exited): ExitCode and SandboxDenied are set.
	EventExited
	// EventClosed is the close (process/closed): the last event of a process.
	EventClosed
	// EventGap is a run of lost events, Seq…LastSeq (harness/outputGap). With Final the
	// process is gone and no further event, the exit included, will come.
	EventGap
)

func (k EventKind) String() string {
	switch k {
	case EventOutput:
		return "output"
	case EventExited:
		return "exited"
	case EventClosed:
		return "closed"
	case EventGap:
		return "gap"
	}
	return fmt.Sprintf("EventKind(%d)", uint8(k))
}

// ProcessEvent is one event of a process, as ProcessEvents returns them: in seq order,
// each seq once.
type ProcessEvent struct {
	Kind EventKind
	// Seq is the event's seq; for EventGap the first lost seq.
	Seq uint64
	// LastSeq is the last lost seq of an EventGap (equal to Seq for one lost event; 0 with
	// Final when the end is unknown).
	LastSeq uint64
	// Final: an EventGap after which nothing comes (the process is gone).
	Final bool
	// Stream and Chunk are set for EventOutput.
	Stream protocol.ExecOutputStream
	Chunk  []byte
	// ExitCode and SandboxDenied are set for EventExited.
	ExitCode      int32
	SandboxDenied bool

	// storage is the pooled buffer Chunk lies in (ProcessEvents.Take), nil otherwise.
	storage *msgStorage
}

// Release hands back the pooled buffer of an EventOutput's Chunk that ProcessEvents.Take
// decoded: Chunk must not be used afterwards, by anyone it was passed to. Optional (an
// unreleased chunk is collected); for events from Add, and for other kinds, it does
// nothing; releasing twice does nothing more.
func (ev ProcessEvent) Release() { ev.storage.free() }

// ProcessEvents puts the events of one process in seq order. The executor numbers output,
// exit and close with one counter from 1 (spec/jsonrpc.md §5.3), and a released executor
// sends exit and close from other tasks than output, so they can overtake it; after a
// session recovery some events can also come twice. Add takes the notifications in any
// order and returns those that are next in seq order, each seq once; gaps the SDK proved
// (harness/outputGap) take the place of the events they cover, so a consumer never waits
// for a seq that cannot come.
//
// Memory: out-of-order events are buffered until their predecessors arrive; with the
// executors this SDK talks to that is at most the events one overtaking exit or close
// skipped. PendingBytes reports the buffered output bytes.
//
// A ProcessEvents is not safe for concurrent use. The zero value is not usable; call
// NewProcessEvents.
type ProcessEvents struct {
	id           string
	next         uint64 // next seq to return
	pending      map[uint64]ProcessEvent
	pendingBytes int
	done         bool
}

// NewProcessEvents returns a collector for the process processID.
func NewProcessEvents(processID string) *ProcessEvents {
	return &ProcessEvents{id: processID, next: 1, pending: make(map[uint64]ProcessEvent)}
}

// Done reports whether the last event (EventClosed, or a final EventGap) was returned.
func (e *ProcessEvents) Done() bool { return e.done }

// Next returns the next seq Add will return.
func (e *ProcessEvents) Next() uint64 { return e.next }

// PendingBytes returns the output bytes buffered out of order.
func (e *ProcessEvents) PendingBytes() int { return e.pendingBytes }

// Add feeds one notification and appends the events now in order to dst. Notifications of
// other processes or methods are ignored (dst is returned as is); a notification of this
// process that does not decode is an error.
func (e *ProcessEvents) Add(dst []ProcessEvent, n Notification) ([]ProcessEvent, error) {
	return e.add(dst, n, false)
}

// Take is Add for a consumer that hands storage back (storage.go): it consumes n, which
// it releases (Notification.Release) before returning, so neither n nor its Params may be
// used afterwards; and each returned EventOutput's Chunk is decoded into a pooled buffer
// (when large enough) that the consumer hands back with ProcessEvent.Release once done
// with it. Events Take drops (duplicates, other processes, output a gap superseded)
// are handed back by Take itself.
func (e *ProcessEvents) Take(dst []ProcessEvent, n Notification) ([]ProcessEvent, error) {
	defer n.Release()
	return e.add(dst, n, true)
}

func (e *ProcessEvents) add(dst []ProcessEvent, n Notification, pooled bool) ([]ProcessEvent, error) {
	if id, ok := n.ProcessID(); n.Method != MethodOutputGap && (!ok || id != e.id) {
		return dst, nil
	}
	ev, pid, err := decodeProcessEvent(n, pooled)
	if err != nil {
		return dst, err
	}
	if pid != e.id || e.done {
		ev.Release()
		return dst, nil
	}
	if ev.Kind == EventGap {
		if ev.Seq < e.next {
			ev.Seq = e.next // the part already delivered is not lost
		}
		if !ev.Final && ev.LastSeq < ev.Seq {
			return dst, nil
		}
	} else if ev.Seq < e.next {
		ev.Release()
		return dst, nil // duplicate
	}
	if _, dup := e.pending[ev.Seq]; dup {
		ev.Release()
		return dst, nil
	}
	e.pending[ev.Seq] = ev
	e.pendingBytes += len(ev.Chunk)
	return e.release(dst), nil
}

// release appends every pending event that is next in order.
func (e *ProcessEvents) release(dst []ProcessEvent) []ProcessEvent {
	for !e.done {
		ev, ok := e.pending[e.next]
		if !ok {
			return dst
		}
		delete(e.pending, e.next)
		e.pendingBytes -= len(ev.Chunk)
		dst = append(dst, ev)
		switch {
		case ev.Kind == EventClosed, ev.Kind == EventGap && ev.Final:
			e.done = true
			for _, p := range e.pending {
				p.Release()
			}
			clear(e.pending)
			e.pendingBytes = 0
		case ev.Kind == EventGap:
			// Anything buffered inside the gap is superseded by it.
			for s := e.next + 1; s <= ev.LastSeq; s++ {
				if p, ok := e.pending[s]; ok {
					e.pendingBytes -= len(p.Chunk)
					delete(e.pending, s)
					p.Release()
				}
			}
			e.next = ev.LastSeq + 1
		default:
			e.next++
		}
	}
	return dst
}

// decodeProcessEvent decodes a process/* or harness/outputGap notification; with pooled,
// an output chunk goes into a pooled buffer (ProcessEvent.Release).
func decodeProcessEvent(n Notification, pooled bool) (ProcessEvent, string, error) {
	switch n.Method {
	case protocol.MethodProcessOutput:
		if pooled {
			o, st, err := n.processOutputPooled()
			return ProcessEvent{Kind: EventOutput, Seq: o.Seq, Stream: o.Stream, Chunk: o.Chunk, storage: st}, o.ProcessID, err
		}
		o, err := n.ProcessOutput()
		return ProcessEvent{Kind: EventOutput, Seq: o.Seq, Stream: o.Stream, Chunk: o.Chunk}, o.ProcessID, err
	case protocol.MethodProcessExited:
		x, err := n.ProcessExited()
		return ProcessEvent{Kind: EventExited, Seq: x.Seq, ExitCode: x.ExitCode, SandboxDenied: x.SandboxDenied}, x.ProcessID, err
	case protocol.MethodProcessClosed:
		c, err := n.ProcessClosed()
		return ProcessEvent{Kind: EventClosed, Seq: c.Seq}, c.ProcessID, err
	case MethodOutputGap:
		g, err := n.OutputGap()
		return ProcessEvent{Kind: EventGap, Seq: g.Seq, LastSeq: g.LastSeq, Final: g.Final}, g.ProcessID, err
	}
	return ProcessEvent{}, "", fmt.Errorf("%w: unexpected notification %s", ErrProtocol, n.Method)
}
