package process

import (
	"context"

	"github.com/execlab/executor/executor/protocol"
	"github.com/execlab/executor/internal/oserr"
	"github.com/execlab/executor/jsonwire"
)

// ResizePty handles process/resizePty, an extension (docs/protocol-extensions.md): it
// sets the PTY's window size with TIOCSWINSZ on the master, and the kernel sends SIGWINCH
// to the terminal's foreground process group (tty_do_resize; verified by
// TestResizePty_SIGWINCHReachesForeground). rows and cols must be at least 1.
//
// Unknown, Starting, pipe and exited processes get a status, not an error. An ioctl
// failure is -32603 "failed to resize terminal: <OS error>".
func (m *Manager) ResizePty(ctx context.Context, params *protocol.ProcessResizePtyParams) (*protocol.ProcessResizePtyResult, error) {
	if err := validatePtySize(&params.Size); err != nil {
		return nil, err
	}
	p := m.lookup(params.ProcessID)
	if p == nil {
		return &protocol.ProcessResizePtyResult{Status: protocol.ResizeUnknownProcess}, nil
	}
	// p.mu is held across the ioctl so that "not exited" and "resize" are one step; the
	// ioctl does not block.
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case p.starting:
		return &protocol.ProcessResizePtyResult{Status: protocol.ResizeStarting}, nil
	case !p.tty:
		return &protocol.ProcessResizePtyResult{Status: protocol.ResizeNotPty}, nil
	case p.exited || p.reaped || p.stdin == nil:
		return &protocol.ProcessResizePtyResult{Status: protocol.ResizeExited}, nil
	}
	if err := setWinsize(p.stdin.f, &params.Size); err != nil {
		if isClosedFile(err) { // the close event raced us: the terminal is gone
			return &protocol.ProcessResizePtyResult{Status: protocol.ResizeExited}, nil
		}
		return nil, jsonwire.Internal("failed to resize terminal: %s", oserr.Text(err))
	}
	return &protocol.ProcessResizePtyResult{Status: protocol.ResizeResized}, nil
}

// validatePtySize checks a size from the wire (resizePty's size, process/start's ptySize).
func validatePtySize(s *protocol.PtySize) error {
	if s.Rows < minPtyCells || s.Cols < minPtyCells {
		return jsonwire.InvalidParams("pty size rows and cols must be at least %d", minPtyCells)
	}
	return nil
}
