package harness

import (
	"context"

	"github.com/execlab/executor/executor/protocol"
)

// Typed helpers for process/* (spec/jsonrpc.md §3.1–§3.4). Events of a started process
// arrive as notifications (process/output, process/exited, process/closed), possibly before
// StartProcess returns; decode them with Notification.ProcessOutput and friends.

// StartProcess calls process/start. p.PtySize (an extension) is sent only when the
// executor advertised processStartPtySize (Capabilities); otherwise it is dropped and a
// PTY starts at the executor's default size (24×80 for released executors).
//
// When the executor advertised processOutputAck (and Options.DisableOutputAck is false),
// the process is started with outputAck (docs/reliability.md): the Client acknowledges its
// events as the consumer takes them, the executor loses none of them across reconnects
// and never has more than a window in flight. p.OutputAck set by the caller is honoured
// only with the flag.
func (c *Client) StartProcess(ctx context.Context, p protocol.ProcessStartParams) (protocol.ProcessStartResult, error) {
	caps := c.Capabilities()
	if p.PtySize != nil && !caps.ProcessStartPtySize {
		p.PtySize = nil
	}
	p.OutputAck = caps.ProcessOutputAck && (p.OutputAck || !c.opts.DisableOutputAck)
	if p.OutputAck {
		c.acks.add(p.ProcessID) // events may arrive before the reply
	}
	var res protocol.ProcessStartResult
	err := c.Call(ctx, protocol.MethodProcessStart, p, &res)
	if err != nil && p.OutputAck {
		c.acks.remove(p.ProcessID)
	}
	return res, err
}

// ReadProcess calls process/read. A WaitMs long-poll holds the server's request lane
// (serial by default) for that long.
func (c *Client) ReadProcess(ctx context.Context, p protocol.ProcessReadParams) (protocol.ProcessReadResult, error) {
	var res protocol.ProcessReadResult
	err := c.Call(ctx, protocol.MethodProcessRead, p, &res)
	return res, err
}

// WriteProcess calls process/write with the given writeId (must be non-empty; reuse it
// when retrying the same bytes so the server writes them once). Statuses other than
// "accepted" are successful results, not errors.
func (c *Client) WriteProcess(ctx context.Context, processID, writeID string, chunk []byte) (protocol.WriteStatus, error) {
	var res protocol.ProcessWriteResult
	err := c.Call(ctx, protocol.MethodProcessWrite, protocol.ProcessWriteParams{
		ProcessID: processID,
		Chunk:     chunk,
		WriteID:   writeID,
	}, &res)
	return res.Status, err
}

// SignalProcess calls process/signal; only protocol.SignalInterrupt exists.
func (c *Client) SignalProcess(ctx context.Context, processID string, sig protocol.ProcessSignal) error {
	return c.Call(ctx, protocol.MethodProcessSignal, protocol.ProcessSignalParams{
		ProcessID: processID,
		Signal:    sig,
	}, nil)
}

// TerminateProcess calls process/terminate and reports whether the process was still
// running (then process/exited and process/closed follow).
func (c *Client) TerminateProcess(ctx context.Context, processID string) (bool, error) {
	var res protocol.ProcessTerminateResult
	err := c.Call(ctx, protocol.MethodProcessTerminate, protocol.ProcessTerminateParams{ProcessID: processID}, &res)
	return res.Running, err
}
