package harness

import (
	"context"
	"errors"
	"fmt"

	"github.com/execlab/executor/executor/protocol"
	"github.com/execlab/executor/jsonwire"
)

// Protocol extensions (docs/protocol-extensions.md): process/closeStdin,
// process/resizePty, process/sendSignal, process/exitStatus and process/start's ptySize.
// Only executors of this project advertise them (capabilities processCloseStdin,
// processResizePty, processSendSignal, processExitStatus, processStartPtySize); released
// codex exec-servers have none. The
// helpers below use an extension only when the executor advertised it in the result of
// this Client's Initialize; otherwise they return an error wrapping ErrNotSupported
// without sending anything.

// ErrNotSupported is wrapped by the error of an extension helper when the executor did
// not advertise the extension (a released codex exec-server, or Initialize was not called
// through this Client), and when it answered -32601 regardless.
var ErrNotSupported = errors.New("not supported by this executor")

// Capabilities returns the capabilities the executor advertised in this Client's last
// successful Initialize; the zero value (nothing supported) before that.
func (c *Client) Capabilities() protocol.Capabilities {
	if p := c.caps.Load(); p != nil {
		return *p
	}
	return protocol.Capabilities{}
}

// CloseStdin calls process/closeStdin: the child reads EOF after the bytes already
// written (pipes; with a PTY the terminal's EOF character is sent). Statuses other than
// "closed" are successful results, not errors. Not re-sent by a session recovery (with
// a PTY a repeat sends a second EOF character): after a reconnect it fails like any
// non-repeatable call.
func (c *Client) CloseStdin(ctx context.Context, processID string) (protocol.CloseStdinStatus, error) {
	if !c.Capabilities().ProcessCloseStdin {
		return "", notSupported(protocol.MethodProcessCloseStdin)
	}
	var res protocol.ProcessCloseStdinResult
	err := c.Call(ctx, protocol.MethodProcessCloseStdin, protocol.ProcessCloseStdinParams{ProcessID: processID}, &res)
	return res.Status, extensionErr(protocol.MethodProcessCloseStdin, err)
}

// ResizePty calls process/resizePty; the remote program gets SIGWINCH. Statuses other
// than "resized" are successful results. Idempotent, so a session recovery re-sends it.
func (c *Client) ResizePty(ctx context.Context, processID string, size protocol.PtySize) (protocol.ResizeStatus, error) {
	if !c.Capabilities().ProcessResizePty {
		return "", notSupported(protocol.MethodProcessResizePty)
	}
	var res protocol.ProcessResizePtyResult
	err := c.Call(ctx, protocol.MethodProcessResizePty, protocol.ProcessResizePtyParams{ProcessID: processID, Size: size}, &res)
	return res.Status, extensionErr(protocol.MethodProcessResizePty, err)
}

// SendSignal calls process/sendSignal: sig to the process's group (process/signal only
// knows "interrupt").
func (c *Client) SendSignal(ctx context.Context, processID string, sig protocol.PosixSignal) error {
	if !c.Capabilities().ProcessSendSignal {
		return notSupported(protocol.MethodProcessSendSignal)
	}
	err := c.Call(ctx, protocol.MethodProcessSendSignal, protocol.ProcessSendSignalParams{ProcessID: processID, Signal: sig}, nil)
	return extensionErr(protocol.MethodProcessSendSignal, err)
}

// ExitStatus calls process/exitStatus: how the process ended, with the number of the
// signal that killed it (which the wire exitCode of a PTY child hides). Statuses other
// than "exited" are successful results. Read-only, so a session recovery re-sends it.
func (c *Client) ExitStatus(ctx context.Context, processID string) (*protocol.ProcessExitStatusResult, error) {
	if !c.Capabilities().ProcessExitStatus {
		return nil, notSupported(protocol.MethodProcessExitStatus)
	}
	var res protocol.ProcessExitStatusResult
	if err := c.Call(ctx, protocol.MethodProcessExitStatus, protocol.ProcessExitStatusParams{ProcessID: processID}, &res); err != nil {
		return nil, extensionErr(protocol.MethodProcessExitStatus, err)
	}
	return &res, nil
}

func notSupported(what string) error { return fmt.Errorf("%s: %w", what, ErrNotSupported) }

// extensionErr maps a -32601 answer to ErrNotSupported (an executor that advertised the
// flag but lacks the method) and keeps every other error as it is.
func extensionErr(method string, err error) error {
	var re *RPCError
	if errors.As(err, &re) && re.Code == jsonwire.CodeMethodNotFound {
		return fmt.Errorf("%s: %w (%w)", method, ErrNotSupported, err)
	}
	return err
}
