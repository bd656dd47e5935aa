package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/execlab/executor/cmd/executor/internal/forward"
	"github.com/execlab/executor/executor/jsonrpc"
)

// runExecServerForward is `executor exec-server forward`: registration, rendezvous and the
// Noise responder of `executor remote`, with each harness stream bridged to a fresh
// WebSocket to --connect (internal/forward) instead of served here.
func runExecServerForward(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	c := &clapCommand{name: "exec-server forward", args: execServerArgs(true),
		required: []string{"remote", "environment-id", "connect"}}
	m, err := c.parse(args, nil)
	if errors.Is(err, errClapHelp) {
		fmt.Fprint(stdout, execServerForwardUsage)
		return nil
	}
	if err != nil {
		return err
	}
	// The reference's order: features, --aws-sigv4, --strict-config, the transport, then
	// the target URL.
	if err := checkExecServerCommon(m); err != nil {
		return err
	}
	if err := execServerConfig(m).checkStrict(codexHomeDir()); err != nil {
		return err
	}
	if m.get("remote-transport", "noise") == "direct" {
		return errors.New("direct exec-server transport does not support forwarding")
	}
	// The target URL is checked after the registry credentials are resolved (and a bearer
	// read from stdin), as by the reference.
	target := m.get("connect", "")
	return runExecServerRemote(ctx, m, 1, execServerSandbox(m), stdin, stderr, &remoteForward{
		bridge: forward.New(&forward.Options{Target: target}).Bridge,
		check: func() error {
			if err := forward.CheckTarget(target); err != nil {
				return fmt.Errorf("failed to configure exec-server websocket: %w", err)
			}
			return nil
		},
	})
}

// remoteForward is what exec-server forward adds to the remote command: the stream bridge
// and the target check run after authentication.
type remoteForward struct {
	bridge func(context.Context, jsonrpc.MessageConn) error
	check  func() error
}
