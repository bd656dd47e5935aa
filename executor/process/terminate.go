package process

import (
	"context"
	"syscall"
	"time"

	"github.com/execlab/executor/executor/protocol"
	"github.com/execlab/executor/internal/oserr"
	"github.com/execlab/executor/jsonwire"
)

// Terminate handles process/terminate (spec/jsonrpc.md §3.4, §5.4): SIGKILL to the
// process group at once, no grace period. running is true for a Running process with no
// known exit (process/exited and process/closed follow later) and for a Starting one
// (whose entry is removed: its start fails "start was cancelled"); false when the exit is
// already known or the id is unknown.
func (m *Manager) Terminate(ctx context.Context, params *protocol.ProcessTerminateParams) (*protocol.ProcessTerminateResult, error) {
	m.mu.Lock()
	m.sweepLocked(time.Now())
	p := m.procs[params.ProcessID]
	if p == nil {
		m.mu.Unlock()
		return &protocol.ProcessTerminateResult{Running: false}, nil
	}
	p.mu.Lock()
	if p.starting {
		p.mu.Unlock()
		delete(m.procs, params.ProcessID)
		m.mu.Unlock()
		return &protocol.ProcessTerminateResult{Running: true}, nil
	}
	m.mu.Unlock()
	sent, err := p.signalGroupLocked(syscall.SIGKILL)
	if sent {
		p.killed = true
	}
	p.mu.Unlock()
	if err != nil {
		return nil, jsonwire.Internal("failed to terminate process: %s", oserr.Text(err))
	}
	return &protocol.ProcessTerminateResult{Running: sent}, nil
}
