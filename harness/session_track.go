package harness

// What a sessionConn watches as messages pass (spec/jsonrpc.md §2.5): the session id and
// client name that initialize tells, the requests in flight (a recovery re-sends or fails
// them), and per process the seqs of the events delivered (a catch-up starts after them, and
// an event delivered twice is dropped).

import (
	"encoding/json"

	"github.com/execlab/executor/executor/protocol"
	"github.com/execlab/executor/jsonwire"
)

// retrySafe reports whether a recovery re-sends method as it was: repeating it cannot apply
// anything twice. The property lives with the method in executor/protocol
// (method_props.go), which the executor's method table is checked against.
func retrySafe(method string) bool { return protocol.RetrySafe(method) }

type inflightReq struct {
	order  uint64
	method string
	msg    []byte
}

// procState is what has been delivered of one process's events. The reference sends exit
// and close from separate tasks, so they may overtake output: delivery is tracked as a
// contiguous watermark plus the seqs delivered above it.
type procState struct {
	watermark uint64          // every seq ≤ watermark was delivered
	above     map[uint64]bool // delivered seqs > watermark
	exitSeen  bool
	closeSeq  uint64 // seq of process/closed once delivered, else 0
}

// delivered reports whether seq was already delivered.
func (p *procState) delivered(seq uint64) bool { return seq <= p.watermark || p.above[seq] }

// mark records seq as delivered.
func (p *procState) mark(seq uint64) {
	if p.above == nil {
		p.above = make(map[uint64]bool)
	}
	p.above[seq] = true
	for p.above[p.watermark+1] {
		delete(p.above, p.watermark+1)
		p.watermark++
	}
}

// done reports whether every event up to and including the close was delivered.
func (p *procState) done() bool { return p.closeSeq != 0 && p.watermark >= p.closeSeq }

func (p procState) clone() procState {
	c := p
	c.above = make(map[uint64]bool, len(p.above))
	for k := range p.above {
		c.above[k] = true
	}
	return c
}

// observeOutgoingLocked records requests (and what initialize and process/start tell).
func (s *sessionConn) observeOutgoingLocked(msg []byte) {
	if isTunnelNotification(msg) {
		return // bulk data that no recovery replays (tunnel.go): not parsed twice
	}
	m, err := parseMessage(msg)
	if err != nil || m.kind != jsonwire.KindRequest {
		return
	}
	s.order++
	s.inflight[string(m.id)] = &inflightReq{order: s.order, method: m.method, msg: msg}
	switch m.method {
	case protocol.MethodInitialize:
		var p struct {
			ClientName string `json:"clientName"`
		}
		if json.Unmarshal(m.params, &p) == nil {
			s.clientName = p.ClientName
		}
	case protocol.MethodProcessStart:
		if pid, ok := memberString(m.params, "processId"); ok {
			if _, exists := s.procs[pid]; !exists {
				s.procs[pid] = &procState{}
			}
		}
	}
}

// admit updates the session state for a message about to be delivered and reports whether
// to deliver it (false for a process event whose seq was already delivered).
func (s *sessionConn) admit(b []byte) bool {
	if isTunnelNotification(b) {
		return true
	}
	m, err := parseMessage(b)
	if err != nil {
		return true // the Client reports the protocol violation
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch m.kind {
	case jsonwire.KindResponse, jsonwire.KindError:
		req := s.inflight[string(m.id)]
		if req == nil {
			return true
		}
		delete(s.inflight, string(m.id))
		switch {
		case req.method == protocol.MethodInitialize && m.kind == jsonwire.KindResponse:
			if sid, ok := memberString(m.result, "sessionId"); ok {
				s.sessionID = sid
			}
		case req.method == protocol.MethodProcessStart && m.kind == jsonwire.KindError:
			if rm, err := parseMessage(req.msg); err == nil {
				if pid, ok := memberString(rm.params, "processId"); ok {
					delete(s.procs, pid)
				}
			}
		}
	case jsonwire.KindNotification:
		switch m.method {
		case protocol.MethodProcessOutput, protocol.MethodProcessExited, protocol.MethodProcessClosed:
		case MethodOutputGap:
			s.admitGapLocked(m.params)
			return true
		default:
			return true
		}
		pid, ok1 := memberString(m.params, "processId")
		seq, ok2 := memberUint(m.params, "seq")
		p := s.procs[pid]
		if !ok1 || !ok2 || p == nil {
			return true
		}
		if p.delivered(seq) {
			return false
		}
		p.mark(seq)
		switch m.method {
		case protocol.MethodProcessExited:
			p.exitSeen = true
		case protocol.MethodProcessClosed:
			p.closeSeq = seq
		}
		if p.done() {
			delete(s.procs, pid) // nothing follows a close
		}
	}
	return true
}

// admitGapLocked records a synthesized gap's seqs as delivered (they will never come), or
// forgets the process after a final one.
func (s *sessionConn) admitGapLocked(params []byte) {
	var g OutputGap
	if json.Unmarshal(params, &g) != nil {
		return
	}
	p := s.procs[g.ProcessID]
	if p == nil {
		return
	}
	if g.Final {
		delete(s.procs, g.ProcessID)
		return
	}
	for seq := g.Seq; seq <= g.LastSeq && seq >= g.Seq; seq++ {
		p.mark(seq)
	}
}
