package serve

import "time"

// Implementation limits (our choice; the reference's are noted where known).
const (
	// PingInterval is how often the server pings a WebSocket client (reference: 30 s).
	PingInterval = 30 * time.Second
	// PongTimeout drops a client whose pong has not arrived within this time.
	PongTimeout = 60 * time.Second
	// MaxMessageBytes bounds one inbound WebSocket message or stdio line. Large enough
	// for multi-MiB base64 writes; bounded so a client cannot exhaust memory.
	MaxMessageBytes = 64 << 20
	// ShutdownGrace bounds how long Run waits for connections to finish after ctx ends.
	ShutdownGrace = 5 * time.Second
)
