package process

import (
	"context"

	"github.com/execlab/executor/executor/protocol"
	"github.com/execlab/executor/jsonwire"
)

// CloseStdin handles process/closeStdin, an extension (docs/protocol-extensions.md).
//
// Pipes: the stdin pipe is closed once every write accepted before has been written, so
// the child reads them and then EOF; later process/write calls answer stdinClosed. A
// repeat answers closed again.
//
// PTY: a terminal has no EOF of its own, so the terminal's VEOF character (read from the
// line discipline, ^D when it cannot be read) is queued after the accepted writes — in
// canonical mode a read at the start of a line then returns 0 (EOF). When the last byte
// queued did not end a line, VEOF is sent twice: the first flushes the partial line.
// Every call sends it again, and writes stay possible (a shell reads past an EOF). A
// program that turned canonical mode off just receives the character.
//
// Unknown, Starting and pipe processes without pipeStdin get a status, not an error,
// as process/write does. An exited process answers closed.
func (m *Manager) CloseStdin(ctx context.Context, params *protocol.ProcessCloseStdinParams) (*protocol.ProcessCloseStdinResult, error) {
	p := m.lookup(params.ProcessID)
	if p == nil {
		return &protocol.ProcessCloseStdinResult{Status: protocol.CloseStdinUnknownProcess}, nil
	}
	p.mu.Lock()
	starting, q, tty := p.starting, p.stdin, p.tty
	writable := p.tty || p.pipeStdin
	p.mu.Unlock()
	switch {
	case starting:
		return &protocol.ProcessCloseStdinResult{Status: protocol.CloseStdinStarting}, nil
	case !writable:
		return &protocol.ProcessCloseStdinResult{Status: protocol.CloseStdinNoStdin}, nil
	case q == nil:
		return nil, jsonwire.Internal("failed to close process stdin")
	}
	if tty {
		veof := ttyEOFChar(q.f)
		q.enqueueControl(func(last byte, wrote bool) []byte { return ptyEOFBytes(veof, last, wrote) })
	} else {
		q.closeEOF()
	}
	return &protocol.ProcessCloseStdinResult{Status: protocol.CloseStdinClosed}, nil
}

// ptyEOFBytes is what a PTY closeStdin writes: VEOF, preceded by another VEOF that
// flushes the pending partial line when the last byte written neither ended a line nor
// was itself VEOF.
func ptyEOFBytes(veof, last byte, wrote bool) []byte {
	if wrote && last != '\n' && last != '\r' && last != veof {
		return []byte{veof, veof}
	}
	return []byte{veof}
}
