package server

import "context"

// TickForTest runs one heartbeat of n (lease renewal, key-ring check) now.
func (n *Node) TickForTest(ctx context.Context) { n.tick(ctx) }

// KillForTest makes n leave its locations behind when its sockets close, as a killed
// process does (Detached no longer clears them).
func (n *Node) KillForTest() { n.closing.Store(true) }

// CloseRelocatedForTest runs Run's relocation check now.
func (n *Node) CloseRelocatedForTest(ctx context.Context, closeExecutor func(environmentID, socketID string) bool) {
	n.closeRelocated(ctx, closeExecutor)
}
