package executor

import (
	"context"

	"github.com/execlab/executor/executor/process"
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

// onProcs serves a request with a process.Manager method, on the process table of the
// connection's session: the table's handler for the process/* methods that need nothing
// else.
func onProcs[P, R any](f func(*process.Manager, context.Context, *P) (*R, error)) func(context.Context, *conn, *P) (any, error) {
	return func(ctx context.Context, c *conn, p *P) (any, error) { return f(c.session().State.procs, ctx, p) }
}

// sandboxedWithNetwork reports whether sc is a sandbox profile (managed or external) that
// enables the network.
func sandboxedWithNetwork(sc *policy.Context) bool {
	return sc != nil && sc.Permissions.Type != policy.ProfileDisabled && sc.Permissions.Network == policy.NetworkEnabled
}
