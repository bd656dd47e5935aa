package wsconn

import (
	"time"

	"github.com/execlab/executor/relay/frame"
)

// Wire constants, fixed by the reference (codex exec-server 0.169.0).
const (
	// MaxMessageSize is the largest websocket message read or written, in bytes
	// (spec/relay-noise.md §9: 256 KiB; a 300 KiB message drops the executor's socket).
	MaxMessageSize = frame.MaxMessageSize

	// PingInterval is the time from connect to the first Ping and between Pings
	// (spec/relay-noise.md §10, observed: +30 s, +60 s, +90 s).
	PingInterval = 30 * time.Second

	// PongTimeout is how long after a Ping is sent its Pong may take before the connection is
	// dropped (spec/relay-noise.md §10, observed: exactly 60 s; reason pong_timeout).
	PongTimeout = 60 * time.Second

	// WriteTimeout bounds every websocket write (spec/relay-noise.md §10: a write must finish
	// within 60 s; a stuck write ends the socket with write_error).
	WriteTimeout = 60 * time.Second

	// DialTimeout bounds TCP connect plus the websocket upgrade (spec/registry-auth.md §8.3,
	// reference: 10 s).
	DialTimeout = 10 * time.Second

	// BackoffInitial and BackoffMax are the executor's rendezvous redial schedule: base 1 s,
	// doubling per consecutive failure, capped at 30 s (spec/relay-noise.md §11).
	BackoffInitial = 1 * time.Second
	BackoffMax     = 30 * time.Second
)

// Implementation constants (our choice).
const (
	// frameBufferSize is the pooled buffer a message is first read into (conn.go, framePool),
	// in bytes: a data frame carrying one full Noise record (61,456 bytes) and its protobuf
	// fields fits, so relay streams never grow it.
	frameBufferSize = 64 << 10
	// readScratchSize is the most a message buffer grows to, in bytes: one byte more than
	// MaxMessageSize, so an oversized message is detected without relying on the websocket
	// library's off-by-one read limit.
	readScratchSize = MaxMessageSize + 1

	// corkLimit bounds the bytes a dialled connection collects while one frame is written
	// (cork.go), in bytes: the largest frame, its header (at most 14 bytes) and room for a
	// control frame written meanwhile (at most 131 bytes).
	corkLimit = MaxMessageSize + 256
	// corkInitial is the capacity a new batch buffer starts with, in bytes: a frame
	// carrying one full Noise record (61,456 bytes with its tag) and its headers fits.
	corkInitial = 64 << 10

	// discardLimit bounds how much of a text message is read to drop it, in bytes (the read
	// limit already bounds it; this names the value used).
	discardLimit = MaxMessageSize + 1
)
