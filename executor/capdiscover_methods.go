package executor

import (
	"context"

	"github.com/execlab/executor/executor/capdiscover"
	"github.com/execlab/executor/executor/protocol"
)

// familyCapabilityDiscovery names capabilityRoots/discoverV1 in the handshake-order
// messages ("client must call initialize before using capability discovery methods",
// observed from codex 0.171.0 and 0.169.0).
const familyCapabilityDiscovery = "capability discovery"

func capabilityRootsDiscover(ctx context.Context, c *conn, p *protocol.CapabilityRootsDiscoverParams) (any, error) {
	// The service is stateless; it walks with, and sandboxes through, the fs service.
	return capdiscover.New(c.srv.fs).Discover(ctx, p)
}
