package httpreq

import (
	"context"
	"net/http"

	"github.com/execlab/executor/executor/protocol"
)

// RequestForTest returns the result and, for streamed bodies, the start function that the
// connection would run after queueing the response.
func (c *Client) RequestForTest(ctx context.Context, p *protocol.HTTPRequestParams) (*protocol.HTTPRequestResult, func(), error) {
	return c.request(ctx, p)
}

// LeftOriginForTest reports whether the redirect chain of URLs (first the request's, last
// the redirect target) left the request's origin.
func LeftOriginForTest(chain ...string) bool {
	reqs := make([]*http.Request, len(chain))
	for i, u := range chain {
		reqs[i], _ = http.NewRequest("GET", u, nil)
	}
	return leftOrigin(reqs[len(reqs)-1], reqs[:len(reqs)-1])
}
