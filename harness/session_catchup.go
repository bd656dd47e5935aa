package harness

// Catch-up after a resume (spec/jsonrpc.md §2.5, docs/reliability.md §5, §6): reading what
// each process's executor retained after the delivered watermark with process/read, and
// turning the answers into the notifications the Client was not delivered, with gaps for
// output the executor evicted.

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/execlab/executor/executor/protocol"
	"github.com/execlab/executor/jsonwire"
)

// catchUpAll brings every tracked process up to date on a resumed connection. Processes
// started with outputAck are replayed by the executor from their last ack, so only their
// acks are re-sent (the last ones may have been lost with the old connection); the others
// are caught up with process/read (catchUpProcess), whose events go to s.ready at once.
// Messages read meanwhile are appended to live.
func (s *sessionConn) catchUpAll(ctx context.Context, conn MessageConn, live *[][]byte) error {
	s.mu.Lock()
	pids := make([]string, 0, len(s.procs))
	for pid := range s.procs {
		pids = append(pids, pid)
	}
	s.mu.Unlock()
	slices.Sort(pids)
	if s.acks != nil {
		for _, msg := range s.acks.snapshot() {
			if err := conn.WriteMessage(ctx, msg); err != nil {
				return fmt.Errorf("re-sending process/ack: %w", err)
			}
		}
	}
	for _, pid := range pids {
		if s.acks != nil && s.acks.has(pid) {
			continue
		}
		if err := s.catchUpProcess(ctx, conn, pid, live); err != nil {
			return err
		}
	}
	return nil
}

// catchUpProcess reads what pid's executor retained after the delivered watermark in
// answers of at most catchUpReadBytes (spec/jsonrpc.md §3.2: maxBytes is a decoded-byte
// budget, the first chunk always comes, nextSeq is the last returned seq + 1), admitting
// each answer's events before the next read. It stops at a read that returns no chunk (its
// nextSeq, exit and close are then the process's: the reference's catch-up rules apply),
// or once the watermark reaches the first live event of pid (the live stream carries the
// rest). A capped read that moves nothing (a hole that is not provably lost) is followed
// by one uncapped read, the reference client's request.
func (s *sessionConn) catchUpProcess(ctx context.Context, conn MessageConn, pid string, live *[][]byte) error {
	capped := true
	for range maxCatchUpReads {
		s.mu.Lock()
		cur := s.procs[pid]
		var p procState
		if cur != nil {
			p = cur.clone()
		}
		s.mu.Unlock()
		if cur == nil {
			return nil // done (its close was delivered)
		}
		if first, ok := firstLiveSeq(*live, pid); ok && p.watermark+1 >= first {
			return nil
		}
		params := map[string]any{"processId": pid, "afterSeq": p.watermark, "waitMs": 0}
		if capped {
			params["maxBytes"] = catchUpReadBytes
		}
		raw, _ := json.Marshal(params)
		res, rpcErr, err := s.roundTripTimeout(ctx, conn, protocol.MethodProcessRead, raw, live, catchUpReadTimeout)
		if err != nil {
			return err
		}
		if rpcErr != nil {
			// Unknown: evicted (or never started). Whatever was not delivered, the exit
			// included, is gone; say so rather than wait for it.
			s.admitCaughtUp([][]byte{gapNotification(OutputGap{ProcessID: pid, Seq: p.watermark + 1, Final: true})})
			return nil
		}
		var r catchUpResult
		if err := json.Unmarshal(res, &r); err != nil {
			return fmt.Errorf("%w: decoding process/read result: %w", ErrProtocol, err)
		}
		partial := capped && len(r.Chunks) > 0
		s.admitCaughtUp(catchUpEvents(pid, p, r, partial))
		if !partial {
			return nil
		}
		s.mu.Lock()
		moved := s.procs[pid] == nil || s.procs[pid].watermark != p.watermark
		s.mu.Unlock()
		capped = moved
	}
	return fmt.Errorf("catching up %s: %d reads did not reach its live output", pid, maxCatchUpReads)
}

// admitCaughtUp admits catch-up events now (the watermark moves, so the next read and the
// next attempt start after them) and queues them for delivery ahead of everything else.
func (s *sessionConn) admitCaughtUp(msgs [][]byte) {
	for _, m := range msgs {
		if s.admit(m) {
			s.ready = append(s.ready, m)
			s.caughtUp++
		}
	}
}

// processEvents returns the process/output, process/exited and process/closed
// notifications among msgs, in order.
func processEvents(msgs [][]byte) [][]byte {
	var out [][]byte
	for _, b := range msgs {
		if _, ok := parseProcessEvent(b); ok {
			out = append(out, b)
		}
	}
	return out
}

// parseProcessEvent parses b and reports whether it is a process event notification
// (process/output, process/exited or process/closed).
func parseProcessEvent(b []byte) (message, bool) {
	m, err := parseMessage(b)
	if err != nil || m.kind != jsonwire.KindNotification {
		return m, false
	}
	switch m.method {
	case protocol.MethodProcessOutput, protocol.MethodProcessExited, protocol.MethodProcessClosed:
		return m, true
	}
	return m, false
}

// firstLiveSeq returns the lowest seq of pid's process events among live messages.
func firstLiveSeq(live [][]byte, pid string) (uint64, bool) {
	var first uint64
	found := false
	for _, b := range live {
		m, ok := parseProcessEvent(b)
		if !ok {
			continue
		}
		if id, ok := memberString(m.params, "processId"); !ok || id != pid {
			continue
		}
		if seq, ok := memberUint(m.params, "seq"); ok && (!found || seq < first) {
			first, found = seq, true
		}
	}
	return first, found
}

// catchUp turns a process/read result into the notifications the Client has not been
// delivered (spec/jsonrpc.md §2.5): chunks as process/output; if closed, the close at
// nextSeq−1; a missed exit at the one remaining hole. Any other hole is output the
// executor evicted (a released executor keeps 1 MiB): it becomes a harness/outputGap
// (docs/reliability.md §6) instead of a seq the Client would wait for forever. When the
// exit itself fell among the evicted events, it takes the last seq of that run (its code
// is known from the read), so the exit status is still delivered, in order, before the
// close.
func catchUp(pid string, p procState, result []byte) ([][]byte, error) {
	var r catchUpResult
	if err := json.Unmarshal(result, &r); err != nil {
		return nil, fmt.Errorf("%w: decoding process/read result: %w", ErrProtocol, err)
	}
	return catchUpEvents(pid, p, r, false), nil
}

// catchUpEvents is catchUp on a decoded result. partial marks a capped read that returned
// chunks: its nextSeq is only the last returned seq + 1 and more may follow, so no close
// is derived from it, holes are looked for only up to its last chunk, and the exit is
// placed only in a hole between returned chunks (the one place it can provably be); every
// hole below the first returned chunk is evicted output, reported as a gap. (A process
// whose exit was itself evicted by more than the ring of later output — a child that
// outlived it — then gets its close without an exit status.)
func catchUpEvents(pid string, p procState, r catchUpResult, partial bool) [][]byte {
	var evs []seqMsg
	have := make(map[uint64]bool, len(r.Chunks))
	firstChunk := uint64(0)
	for _, c := range r.Chunks {
		have[c.Seq] = true
		if firstChunk == 0 || c.Seq < firstChunk {
			firstChunk = c.Seq
		}
		if p.delivered(c.Seq) {
			continue
		}
		b, _ := json.Marshal(map[string]any{"method": protocol.MethodProcessOutput,
			"params": map[string]any{"processId": pid, "seq": c.Seq, "stream": c.Stream, "chunk": c.Chunk}})
		evs = append(evs, seqMsg{c.Seq, b})
	}
	var closeSeq uint64
	nextSeq := r.NextSeq
	if partial {
		nextSeq = 0
		for _, c := range r.Chunks {
			nextSeq = max(nextSeq, c.Seq+1)
		}
	} else if r.Closed && r.NextSeq > 0 {
		closeSeq = r.NextSeq - 1
	}
	holes := holeRuns(p, have, closeSeq, nextSeq)
	// Holes above the first returned chunk can only be the exit (a ring evicts its oldest
	// chunks); holes below it are evicted output, or the exit evicted with it.
	if r.Exited && !p.exitSeen && len(holes) > 0 {
		if exitSeq := missedExitSeq(holes, firstChunk, partial); exitSeq != 0 {
			evs, holes = appendExit(evs, holes, pid, exitSeq, r)
		}
	}
	for _, h := range holes {
		if firstChunk != 0 && h.first > firstChunk {
			break // not provably lost (see above)
		}
		evs = append(evs, seqMsg{h.first, gapNotification(OutputGap{ProcessID: pid, Seq: h.first, LastSeq: h.last})})
	}
	if closeSeq != 0 && !p.delivered(closeSeq) {
		b, _ := json.Marshal(map[string]any{"method": protocol.MethodProcessClosed,
			"params": map[string]any{"processId": pid, "seq": closeSeq}})
		evs = append(evs, seqMsg{closeSeq, b})
	}
	slices.SortFunc(evs, func(a, b seqMsg) int { return cmp.Compare(a.seq, b.seq) })
	out := make([][]byte, len(evs))
	for i, e := range evs {
		out[i] = e.msg
	}
	return out
}

// missedExitSeq is where a missed exit goes among the holes (non-empty): the first hole
// above the first returned chunk, else the end of the lost run below it (or the last hole
// when no chunk came); 0 when a partial read leaves it undecided (see catchUpEvents).
func missedExitSeq(holes []seqRun, firstChunk uint64, partial bool) uint64 {
	exitSeq := holes[len(holes)-1].last // none among the retained chunks: end of the lost run
	if partial {
		exitSeq = 0 // only between the returned chunks
	}
	for _, h := range holes {
		if firstChunk != 0 && h.first > firstChunk {
			return h.first
		}
		if firstChunk != 0 && h.first < firstChunk && !partial {
			exitSeq = h.last
		}
	}
	return exitSeq
}

// appendExit adds the exit event at exitSeq and removes that seq from the holes.
func appendExit(evs []seqMsg, holes []seqRun, pid string, exitSeq uint64, r catchUpResult) ([]seqMsg, []seqRun) {
	code := int32(0)
	if r.ExitCode != nil {
		code = *r.ExitCode
	}
	b, _ := json.Marshal(map[string]any{"method": protocol.MethodProcessExited,
		"params": map[string]any{"processId": pid, "seq": exitSeq, "exitCode": code, "sandboxDenied": r.SandboxDenied}})
	return append(evs, seqMsg{exitSeq, b}), removeSeq(holes, exitSeq)
}

// catchUpResult is the part of a process/read result a catch-up reads.
type catchUpResult struct {
	Chunks []struct {
		Seq    uint64 `json:"seq"`
		Stream string `json:"stream"`
		Chunk  string `json:"chunk"`
	} `json:"chunks"`
	NextSeq       uint64 `json:"nextSeq"`
	Exited        bool   `json:"exited"`
	ExitCode      *int32 `json:"exitCode"`
	Closed        bool   `json:"closed"`
	SandboxDenied bool   `json:"sandboxDenied"`
}

// seqRun is a run of seqs, first…last.
type seqRun struct{ first, last uint64 }

// holeRuns returns, in order, the runs of assigned seqs (watermark < seq < nextSeq) that
// were neither delivered, nor returned (have), nor the close. It walks the known seqs, not
// the range, so a huge nextSeq costs nothing.
func holeRuns(p procState, have map[uint64]bool, closeSeq, nextSeq uint64) []seqRun {
	if nextSeq <= p.watermark+1 {
		return nil
	}
	known := make([]uint64, 0, len(have)+len(p.above)+1)
	for seq := range have {
		known = append(known, seq)
	}
	for seq := range p.above {
		known = append(known, seq)
	}
	if closeSeq != 0 {
		known = append(known, closeSeq)
	}
	slices.Sort(known)
	var runs []seqRun
	next := p.watermark + 1 // first seq not yet accounted for
	for _, k := range known {
		if k < next || k >= nextSeq {
			continue
		}
		if k > next {
			runs = append(runs, seqRun{next, k - 1})
		}
		next = k + 1
	}
	if next < nextSeq {
		runs = append(runs, seqRun{next, nextSeq - 1})
	}
	return runs
}

// removeSeq removes seq from the runs, splitting the run that holds it.
func removeSeq(runs []seqRun, seq uint64) []seqRun {
	out := make([]seqRun, 0, len(runs)+1)
	for _, r := range runs {
		if seq < r.first || seq > r.last {
			out = append(out, r)
			continue
		}
		if r.first < seq {
			out = append(out, seqRun{r.first, seq - 1})
		}
		if seq < r.last {
			out = append(out, seqRun{seq + 1, r.last})
		}
	}
	return out
}

// seqMsg is a synthesized message and the seq it is ordered by.
type seqMsg struct {
	seq uint64
	msg []byte
}
