package harness

import (
	"context"

	"github.com/execlab/executor/executor/protocol"
)

// EnvironmentInfo calls environment/info (spec/jsonrpc.md §3.8).
func (c *Client) EnvironmentInfo(ctx context.Context) (protocol.EnvironmentInfo, error) {
	var res protocol.EnvironmentInfo
	err := c.Call(ctx, protocol.MethodEnvironmentInfo, nil, &res)
	return res, err
}

// EnvironmentStatus calls environment/status and returns its status ("ready").
func (c *Client) EnvironmentStatus(ctx context.Context) (string, error) {
	var res protocol.EnvironmentStatus
	err := c.Call(ctx, protocol.MethodEnvironmentStatus, nil, &res)
	return res.Status, err
}
