package process

import (
	"context"
	"syscall"

	"github.com/execlab/executor/executor/protocol"
	"github.com/execlab/executor/internal/oserr"
	"github.com/execlab/executor/jsonwire"
)

// Signal handles process/signal (spec/jsonrpc.md §3.4): "interrupt" sends SIGINT to the
// child's whole process group. Unknown, Starting and exited processes get {} too.
func (m *Manager) Signal(ctx context.Context, params *protocol.ProcessSignalParams) (*protocol.ProcessSignalResult, error) {
	p := m.lookup(params.ProcessID)
	if p == nil {
		return &protocol.ProcessSignalResult{}, nil
	}
	p.mu.Lock()
	_, err := p.signalGroupLocked(syscall.SIGINT)
	p.mu.Unlock()
	if err != nil {
		return nil, jsonwire.Internal("failed to signal process: %s", oserr.Text(err))
	}
	return &protocol.ProcessSignalResult{}, nil
}
