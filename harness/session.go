package harness

import (
	"context"
	"fmt"
	"time"

	"github.com/execlab/executor/executor/protocol"
)

// Initialize performs the handshake (spec/jsonrpc.md §2.1): `initialize` with clientName
// and, when resumeSessionID is non-empty, a resume of that session; then the `initialized`
// notification. It returns the server's result (sessionId, environmentInfo). A failed
// resume is returned as *RPCError (-32600 unknown session, jsonwire.CodeSessionAttached while the
// session is held elsewhere) and leaves the connection usable for another Initialize.
func (c *Client) Initialize(ctx context.Context, clientName, resumeSessionID string) (protocol.InitializeResult, error) {
	p := protocol.InitializeParams{ClientName: clientName}
	if resumeSessionID != "" {
		p.ResumeSessionID = &resumeSessionID
	}
	var res protocol.InitializeResult
	if err := c.Call(ctx, protocol.MethodInitialize, p, &res); err != nil {
		return res, fmt.Errorf("initializing: %w", err)
	}
	if err := c.notify(ctx, protocol.MethodInitialized, struct{}{}); err != nil {
		return res, fmt.Errorf("initializing: %w", err)
	}
	if res.EnvironmentInfo != nil {
		caps := res.EnvironmentInfo.Capabilities
		c.caps.Store(&caps)
		if sc, ok := c.conn.(*sessionConn); ok && res.EnvironmentInfo.SessionTTLMs <= maxSessionTTLMs {
			// Our executor's sessionTtlMs extension bounds the recovery window.
			sc.boundBySessionTTL(time.Duration(res.EnvironmentInfo.SessionTTLMs) * time.Millisecond)
		}
	}
	return res, nil
}
