package executor

import (
	"context"

	"github.com/execlab/executor/executor/protocol"
)

func httpRequest(ctx context.Context, c *conn, p *protocol.HTTPRequestParams) (any, error) {
	return c.res.http.Request(ctx, p)
}
