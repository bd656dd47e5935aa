package executor

import (
	"context"

	"github.com/execlab/executor/executor/jsonrpc"
	"github.com/execlab/executor/executor/protocol"
)

func init() {
	register(protocol.MethodHTTPRequest, bind(familyHTTP, jsonrpc.LaneOrdinary, func(ctx context.Context, c *conn, p *protocol.HTTPRequestParams) (any, error) {
		return c.res.http.Request(ctx, p)
	}))
}
