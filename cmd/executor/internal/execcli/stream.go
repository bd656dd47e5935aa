package execcli

import (
	"context"
	"fmt"
	"io"

	"github.com/execlab/executor/executor/protocol"
	"github.com/execlab/executor/harness"
)

// stream writes the process's output in seq order until process/closed and returns its
// exit status. Events are applied in seq order: the reference sends exit and close from
// separate tasks, so they can overtake output notifications. When ctx ends it returns
// ctx's cause.
func stream(ctx context.Context, c *harness.Client, pid string, stdout, stderr io.Writer) error {
	exit := -1
	next := uint64(1)
	pending := map[uint64]event{}
	for {
		select {
		case <-ctx.Done():
			return context.Cause(ctx)
		case n, ok := <-c.Notifications():
			if !ok {
				if err := c.Err(); err != nil {
					return err
				}
				return harness.ErrClosed
			}
			if id, _ := n.ProcessID(); id != pid {
				continue
			}
			ev, err := decodeEvent(n)
			if err != nil {
				return err
			}
			if ev.seq < next {
				continue
			}
			pending[ev.seq] = ev
			for {
				ev, ok := pending[next]
				if !ok {
					break
				}
				delete(pending, next)
				next++
				switch ev.method {
				case protocol.MethodProcessOutput:
					w := stdout
					if ev.stream == protocol.StreamStderr {
						w = stderr
					}
					if _, err := w.Write(ev.chunk); err != nil {
						return fmt.Errorf("writing output: %w", err)
					}
				case protocol.MethodProcessExited:
					exit = ev.exitCode
				case protocol.MethodProcessClosed:
					switch {
					case exit == 0:
						return nil
					case exit < 0:
						return &ExitError{Code: 1}
					}
					// A signal death is already 128+N on the wire with pipes (SIGTERM →
					// 143), as ssh reports it; with a PTY the executor reports 1, and
					// process/exitStatus (when advertised) names the signal.
					if exit == ptySignalExitCode {
						if sig := exitSignal(ctx, c, pid); sig > 0 {
							return &ExitError{Code: 128 + sig}
						}
					}
					return &ExitError{Code: exit}
				}
			}
		}
	}
}

// exitSignal returns the signal that killed pid, or 0 when it exited normally, the
// executor does not offer process/exitStatus (a released one), or asking failed.
func exitSignal(ctx context.Context, c *harness.Client, pid string) int {
	res, err := c.ExitStatus(ctx, pid)
	if err != nil || res.Status != protocol.ExitStatusExited || res.Signal == nil {
		return 0
	}
	return int(*res.Signal)
}

// event is one decoded process notification.
type event struct {
	method   string
	seq      uint64
	stream   protocol.ExecOutputStream
	chunk    []byte
	exitCode int
}

// decodeEvent decodes a process/* notification once.
func decodeEvent(n harness.Notification) (event, error) {
	ev := event{method: n.Method}
	switch n.Method {
	case protocol.MethodProcessOutput:
		out, err := n.ProcessOutput()
		ev.seq, ev.stream, ev.chunk = out.Seq, out.Stream, out.Chunk
		return ev, err
	case protocol.MethodProcessExited:
		x, err := n.ProcessExited()
		ev.seq, ev.exitCode = x.Seq, int(x.ExitCode)
		return ev, err
	case protocol.MethodProcessClosed:
		x, err := n.ProcessClosed()
		ev.seq = x.Seq
		return ev, err
	}
	return ev, fmt.Errorf("unexpected notification %s", n.Method)
}
