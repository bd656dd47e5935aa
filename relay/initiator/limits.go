package initiator

import "time"

// Implementation constants (our choice; the released protocol fixes none of them).
const (
	// reorderStallTimeout bounds how long a non-ARQ stream waits for a missing record
	// while later ones are buffered (docs/reliability.md §8). A websocket delivers in
	// order, so a gap only comes from a faulty rendezvous; 2 s is 200 times the chaos
	// proxy's reorder hold.
	reorderStallTimeout = 2 * time.Second

	// reorderStallGrace is the least time a read gets after the stall bound passed while
	// nobody was reading: the missing record may be waiting in the socket.
	reorderStallGrace = 250 * time.Millisecond

	// arqQueueBytes bounds the records released in order that the channel has not read
	// yet, in bytes: 8 MiB, the harness's notification queue bound
	// (harness.Options.NotificationBytes), so the ARQ reader holds no more than the read
	// loop above it would.
	arqQueueBytes = 8 << 20
)
