package execcli

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/execlab/executor/executor/protocol"
	"github.com/execlab/executor/harness"
)

// ErrProcessLost: the executor no longer knows the process (its session survived but the
// process was evicted while this client was away), so its exit status is unknown.
var ErrProcessLost = errors.New("the remote process's output and exit status were lost while disconnected")

// ErrExitStatusLost: the process closed but its exit event was among the output a
// released executor evicted while the client was away, so its status is unknown (exec
// exits 255, like any lost session or process, instead of inventing one).
var ErrExitStatusLost = errors.New("the remote process's exit status was lost while disconnected")

// stream writes the process's output in seq order until process/closed and returns its
// exit status. harness.ProcessEvents orders the events (the reference sends exit and close
// from separate tasks, so they can overtake output) and turns the SDK's proven gaps into
// events: a gap is reported on stderr once, and streaming goes on. When ctx ends it
// returns ctx's cause.
func stream(ctx context.Context, c *harness.Client, pid string, stdout, stderr io.Writer, out *notes) error {
	evs := harness.NewProcessEvents(pid)
	exit := -1
	var batch []harness.ProcessEvent
	for {
		var n harness.Notification
		select {
		case <-ctx.Done():
			return context.Cause(ctx)
		case nn, ok := <-c.Notifications():
			if !ok {
				if err := c.Err(); err != nil {
					return err
				}
				return harness.ErrClosed
			}
			n = nn
		}
		var err error
		// Take: n's storage and each chunk's go back to the SDK's pools once written (an
		// io.Writer does not retain what it is given), so a fast stream allocates almost
		// nothing per chunk (issue 16).
		if batch, err = evs.Take(batch[:0], n); err != nil {
			return err
		}
		for _, ev := range batch {
			switch ev.Kind {
			case harness.EventOutput:
				w := stdout
				if ev.Stream == protocol.StreamStderr {
					w = stderr
				}
				_, err := w.Write(ev.Chunk)
				ev.Release()
				if err != nil {
					return fmt.Errorf("writing output: %w", err)
				}
			case harness.EventGap:
				if ev.Final {
					return ErrProcessLost
				}
				out.printf("executor exec: %d output events (seq %d-%d) were lost while disconnected: the executor had not kept them; continuing\n",
					ev.LastSeq-ev.Seq+1, ev.Seq, ev.LastSeq)
			case harness.EventExited:
				exit = int(ev.ExitCode)
			case harness.EventClosed:
				return exitResult(ctx, c, pid, exit)
			}
		}
	}
}

// exitResult turns the exit code into Run's result: nil for 0, *ExitError otherwise.
func exitResult(ctx context.Context, c *harness.Client, pid string, exit int) error {
	switch {
	case exit == 0:
		return nil
	case exit < 0:
		return ErrExitStatusLost
	}
	// A signal death is already 128+N on the wire with pipes (SIGTERM → 143), as ssh
	// reports it; with a PTY the executor reports 1, and process/exitStatus (when
	// advertised) names the signal.
	if exit == ptySignalExitCode {
		if sig := exitSignal(ctx, c, pid); sig > 0 {
			return &ExitError{Code: 128 + sig}
		}
	}
	return &ExitError{Code: exit}
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
