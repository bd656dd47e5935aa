package process

import (
	"context"

	"github.com/execlab/executor/executor/protocol"
)

// ExitStatus handles process/exitStatus, an extension (docs/protocol-extensions.md): it
// reports how a process ended, including the signal that killed it. The wire exitCode
// hides that signal for PTY children (1, as the reference sends), so a client that wants
// ssh's 128+N asks here. Unknown, Starting and running processes get a status; a closed
// process stays answerable for as long as process/read can still read it.
func (m *Manager) ExitStatus(_ context.Context, params *protocol.ProcessExitStatusParams) (*protocol.ProcessExitStatusResult, error) {
	p := m.lookup(params.ProcessID)
	if p == nil {
		return &protocol.ProcessExitStatusResult{Status: protocol.ExitStatusUnknownProcess}, nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case p.starting:
		return &protocol.ProcessExitStatusResult{Status: protocol.ExitStatusStarting}, nil
	case !p.exited:
		return &protocol.ProcessExitStatusResult{Status: protocol.ExitStatusRunning}, nil
	}
	code := p.exitCode
	res := &protocol.ProcessExitStatusResult{Status: protocol.ExitStatusExited, ExitCode: &code}
	if p.exitSignal != 0 {
		sig := p.exitSignal
		res.Signal = &sig
	}
	return res, nil
}
