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
func (c *Client) StartProcess(ctx context.Context, p protocol.ProcessStartParams) (protocol.ProcessStartResult, error) {
	if p.PtySize != nil && !c.Capabilities().ProcessStartPtySize {
		p.PtySize = nil
	}
	var res protocol.ProcessStartResult
	err := c.Call(ctx, protocol.MethodProcessStart, p, &res)
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
