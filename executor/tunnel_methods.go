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
	return &tunnel.Options{Policy: s.opts.TunnelPolicy, Logger: s.opts.Logger, Observer: obs}
}

// withTunnel sets info's tcpTunnel capability when the policy allows any destination.
func withTunnel(info *protocol.EnvironmentInfo, p *tunnel.Policy) *protocol.EnvironmentInfo {
	info.Capabilities.TCPTunnel = p.Enabled()
	return info
}
