package process

import (
	"context"
	"syscall"

	"github.com/execlab/executor/executor/protocol"
	"github.com/execlab/executor/internal/oserr"
	"github.com/execlab/executor/jsonwire"
)

// posixSignals maps process/sendSignal's names (RFC 4254 §6.10) to signals.
var posixSignals = map[protocol.PosixSignal]syscall.Signal{
	protocol.SignalINT:  syscall.SIGINT,
	protocol.SignalTERM: syscall.SIGTERM,
	protocol.SignalHUP:  syscall.SIGHUP,
	protocol.SignalQUIT: syscall.SIGQUIT,
	protocol.SignalKILL: syscall.SIGKILL,
	protocol.SignalUSR1: syscall.SIGUSR1,
	protocol.SignalUSR2: syscall.SIGUSR2,
}

// SendSignal handles process/sendSignal, an extension (docs/protocol-extensions.md):
// process/signal with more signals. Like process/signal, it signals the child's whole
// process group, and unknown, Starting and exited processes get {} too. KILL through it
// is not a terminate: the exit code is the signal's (137 with pipes, 1 with a PTY).
func (m *Manager) SendSignal(ctx context.Context, params *protocol.ProcessSendSignalParams) (*protocol.ProcessSendSignalResult, error) {
	sig, ok := posixSignals[params.Signal]
	if !ok { // the decoder accepts only known names
		return nil, jsonwire.InvalidParams("unknown signal %s", params.Signal)
	}
	p := m.lookup(params.ProcessID)
	if p == nil {
		return &protocol.ProcessSendSignalResult{}, nil
	}
	p.mu.Lock()
	_, err := p.signalGroupLocked(sig)
	p.mu.Unlock()
	if err != nil {
		return nil, jsonwire.Internal("failed to signal process: %s", oserr.Text(err))
	}
	return &protocol.ProcessSendSignalResult{}, nil
}
