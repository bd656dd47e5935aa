package process

import (
	"context"
	"errors"

	"github.com/execlab/executor/executor/protocol"
	"github.com/execlab/executor/jsonwire"
)

// Write handles process/write (spec/jsonrpc.md §3.3). Unknown, Starting and
// stdin-closed processes get a status, not an error. A writeId accepted before for this
// process is answered "accepted" without writing again; the id is recorded atomically
// with the enqueue. Write returns once the chunk is queued, not when the child read it.
func (m *Manager) Write(ctx context.Context, params *protocol.ProcessWriteParams) (*protocol.ProcessWriteResult, error) {
	if params.WriteID == "" {
		return nil, jsonwire.InvalidParams("writeId must not be empty")
	}
	p := m.lookup(params.ProcessID)
	if p == nil {
		return &protocol.ProcessWriteResult{Status: protocol.WriteUnknownProcess}, nil
	}
	p.mu.Lock()
	starting, q := p.starting, p.stdin
	writable := p.tty || p.pipeStdin
	p.mu.Unlock()
	switch {
	case starting:
		return &protocol.ProcessWriteResult{Status: protocol.WriteStarting}, nil
	case !writable:
		return &protocol.ProcessWriteResult{Status: protocol.WriteStdinClosed}, nil
	case q == nil:
		return nil, jsonwire.Internal("failed to write to process stdin")
	}
	if err := q.write(ctx, params.WriteID, params.Chunk); err != nil {
		if errors.Is(err, errStdinEOF) {
			// process/closeStdin (an extension) closed the pipe: same status as a
			// process started without pipeStdin.
			return &protocol.ProcessWriteResult{Status: protocol.WriteStdinClosed}, nil
		}
		return nil, err
	}
	return &protocol.ProcessWriteResult{Status: protocol.WriteAccepted}, nil
}
