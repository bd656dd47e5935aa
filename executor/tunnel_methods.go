package executor

import (
	"context"

	"github.com/execlab/executor/executor/jsonrpc"
	"github.com/execlab/executor/executor/protocol"
	"github.com/execlab/executor/executor/tunnel"
)

// Port tunnels (docs/protocol-extensions.md, capability tcpTunnel): tunnel/open is the one
// request; the tunnel/* notifications are taken inline (conn.HandleInline) by the
// connection's tunnel.Table, which owns the sockets and dies with the connection.

const familyTunnel = "tunnel"

// tunnelListen serves tunnel/listen (capability tcpTunnelListen): a listener on the
// executor's host whose connections arrive as tunnel/accepted.
func tunnelListen(ctx context.Context, c *conn, p *protocol.TunnelListenParams) (any, error) {
	res, start := c.res.tunnels.Listen(ctx, p)
	if start == nil {
		return res, nil
	}
	return jsonrpc.Then(res, start), nil
}

func tunnelUnlisten(_ context.Context, c *conn, p *protocol.TunnelUnlistenParams) (any, error) {
	return c.res.tunnels.Unlisten(p), nil
}

func tunnelOpen(ctx context.Context, c *conn, p *protocol.TunnelOpenParams) (any, error) {
	res, start := c.res.tunnels.Open(ctx, p)
	if start == nil {
		return res, nil
	}
	return jsonrpc.Then(res, start), nil
}

// tunnelOptions are the options of every connection's tunnel.Table.
func (s *Server) tunnelOptions() *tunnel.Options {
	obs, _ := s.opts.Observer.(tunnel.Observer)
	return &tunnel.Options{Policy: s.opts.TunnelPolicy, ListenPolicy: s.opts.TunnelListenPolicy, Logger: s.opts.Logger, Observer: obs}
}

// withTunnel sets info's tcpTunnel capability when the policy allows any destination,
// and tcpTunnelListen when the listen policy allows any bind.
func withTunnel(info *protocol.EnvironmentInfo, p, listen *tunnel.Policy) *protocol.EnvironmentInfo {
	info.Capabilities.TCPTunnel = p.Enabled()
	info.Capabilities.TCPTunnelListen = listen.Enabled()
	return info
}
