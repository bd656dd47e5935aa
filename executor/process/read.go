package process

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/execlab/executor/executor/protocol"
	"github.com/execlab/executor/jsonwire"
)

// Read handles process/read (spec/jsonrpc.md §3.2): chunks with seq > afterSeq under the
// maxBytes budget, returned at once when any chunk matches, the process is closed, or an
// exit the caller has not seen is known; otherwise it long-polls until an event or the
// waitMs deadline. ctx ends the wait early with ctx's error.
func (m *Manager) Read(ctx context.Context, params *protocol.ProcessReadParams) (*protocol.ProcessReadResult, error) {
	var after uint64
	if params.AfterSeq != nil {
		after = *params.AfterSeq
	}
	maxBytes := int64(-1) // unlimited
	if params.MaxBytes != nil && *params.MaxBytes <= math.MaxInt64 {
		maxBytes = int64(*params.MaxBytes)
	}
	var wait time.Duration
	if params.WaitMs != nil {
		wait = time.Duration(min(*params.WaitMs, uint64(math.MaxInt64/int64(time.Millisecond)))) * time.Millisecond
	}
	deadline := time.Now().Add(wait)

	p := m.lookup(params.ProcessID)
	if p == nil {
		return nil, jsonwire.InvalidRequest("unknown process id %s", params.ProcessID)
	}
	var timer *time.Timer
	for {
		p.mu.Lock()
		if p.starting {
			p.mu.Unlock()
			return nil, jsonwire.InvalidRequest("process id %s is starting", params.ProcessID)
		}
		res := p.readLocked(after, maxBytes)
		if len(res.Chunks) > 0 || res.Closed || (res.Exited && after+1 < res.NextSeq) || !time.Now().Before(deadline) {
			p.mu.Unlock()
			return res, nil
		}
		wake := p.waitChanLocked()
		p.mu.Unlock()
		if timer == nil {
			timer = time.NewTimer(time.Until(deadline))
			defer timer.Stop()
		}
		select {
		case <-wake:
		case <-timer.C:
		case <-ctx.Done():
			return nil, fmt.Errorf("waiting for process output: %w", ctx.Err())
		}
	}
}

// readLocked builds a process/read result from p's current state.
func (p *proc) readLocked(after uint64, maxBytes int64) *protocol.ProcessReadResult {
	chunks := p.out.collect(after, maxBytes)
	next := p.nextSeq
	if maxBytes >= 0 && len(chunks) > 0 {
		next = chunks[len(chunks)-1].Seq + 1
	}
	res := &protocol.ProcessReadResult{
		Chunks:  chunks,
		NextSeq: next,
		Exited:  p.exited,
		Closed:  p.closed,
	}
	if res.Chunks == nil {
		res.Chunks = []protocol.ProcessOutputChunk{}
	}
	if p.exited {
		code := p.exitCode
		res.ExitCode = &code
		res.SandboxDenied = p.denied
	}
	return res
}
