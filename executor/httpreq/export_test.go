package httpreq

import (
	"context"

	"github.com/execlab/executor/executor/protocol"
)

// RequestForTest returns the result and, for streamed bodies, the start function that the
// connection would run after queueing the response.
func (c *Client) RequestForTest(ctx context.Context, p *protocol.HTTPRequestParams) (*protocol.HTTPRequestResult, func(), error) {
	return c.request(ctx, p)
}
