package tunnel

import (
	"time"

	"github.com/execlab/executor/executor/protocol"
)

// Implementation limits (our choice; the wire has none beyond protocol.TunnelMaxChunk).
const (
	// DefaultWindow is the executor's receive window per connection, in bytes, and the
	// window assumed for a client that advertises 0. 2 MiB is 16 chunks and covers the
	// relay's bandwidth-delay product on a LAN (236 MiB/s × 8 ms); 16 connections then
	// pin at most 32 MiB of executor memory in the worst case.
	DefaultWindow = 2 << 20
	// MaxWindow caps the window a client may advertise (credit the executor extends), in
	// bytes: a larger one only lets the executor queue more on the JSON-RPC connection.
	MaxWindow = 16 << 20
	// MaxConns bounds the open tunnels of one JSON-RPC connection.
	MaxConns = 4096
	// DialTimeout bounds a tunnel/open's TCP dial.
	DialTimeout = 10 * time.Second
	// readChunk is the largest read from a destination socket: one tunnel/data.
	readChunk = protocol.TunnelMaxChunk
)
