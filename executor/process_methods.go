package executor

import (
	"context"

	"github.com/execlab/executor/executor/protocol"
	"github.com/execlab/executor/jsonwire"
	"github.com/execlab/executor/sandbox/policy"
)

func processStart(ctx context.Context, c *conn, p *protocol.ProcessStartParams) (any, error) {
	if c.onSandboxedNetworkStart != nil && sandboxedWithNetwork(p.Sandbox) {
		c.onSandboxedNetworkStart()
	}
	return c.session().State.procs.Start(ctx, p)
}

// processRead re-checks the attachment after a long-poll: a session taken over by
// another connection meanwhile fails the read (spec/jsonrpc.md §2.4).
func processRead(ctx context.Context, c *conn, p *protocol.ProcessReadParams) (any, error) {
	sess := c.session()
	res, err := sess.State.procs.Read(ctx, p)
	if !c.srv.sessions.AttachedTo(sess, c) {
		return nil, jsonwire.InvalidRequest("session has been resumed by another connection")
	}
	return res, err
}

func processWrite(ctx context.Context, c *conn, p *protocol.ProcessWriteParams) (any, error) {
	return c.session().State.procs.Write(ctx, p)
}

func processSignal(ctx context.Context, c *conn, p *protocol.ProcessSignalParams) (any, error) {
	return c.session().State.procs.Signal(ctx, p)
}

func processTerminate(ctx context.Context, c *conn, p *protocol.ProcessTerminateParams) (any, error) {
	return c.session().State.procs.Terminate(ctx, p)
}

func processCloseStdin(ctx context.Context, c *conn, p *protocol.ProcessCloseStdinParams) (any, error) {
	return c.session().State.procs.CloseStdin(ctx, p)
}

func processResizePty(ctx context.Context, c *conn, p *protocol.ProcessResizePtyParams) (any, error) {
	return c.session().State.procs.ResizePty(ctx, p)
}

func processSendSignal(ctx context.Context, c *conn, p *protocol.ProcessSendSignalParams) (any, error) {
	return c.session().State.procs.SendSignal(ctx, p)
}

func processExitStatus(ctx context.Context, c *conn, p *protocol.ProcessExitStatusParams) (any, error) {
	return c.session().State.procs.ExitStatus(ctx, p)
}

// sandboxedWithNetwork reports whether sc is a sandbox profile (managed or external) that
// enables the network.
func sandboxedWithNetwork(sc *policy.Context) bool {
	return sc != nil && sc.Permissions.Type != policy.ProfileDisabled && sc.Permissions.Network == policy.NetworkEnabled
}
