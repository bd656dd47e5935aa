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
	// WriteBufferBytes is the write buffer of each WebSocket connection, in bytes
	// (net/http's default is 4 KiB): one frame header plus a typical streamed output
	// message (one pipe read) fits, so such a message is one write syscall (hijack.go).
	WriteBufferBytes = 16 << 10
	// ShutdownGrace bounds how long Run waits for connections to finish after ctx ends.
	ShutdownGrace = 5 * time.Second
)

// HTTP hardening of the WebSocket listener (ours; the reference sets none of these, its
// hyper server only bounds header size). Every request the listener serves is bodiless
// and tiny (GET /readyz, GET / upgrade), so the bounds can be tight without affecting a
// legitimate client.
const (
	// ReadHeaderTimeout bounds reading one request's headers, from the first byte of the
	// connection (or the end of the previous request). A client that cannot send a few
	// hundred bytes of headers in 10 s is stuck or hostile (slowloris).
	ReadHeaderTimeout = 10 * time.Second
	// RequestReadTimeout and RequestWriteTimeout bound a non-upgrade request (headers plus
	// any body) and its response. The upgrade path clears both before switching protocols:
	// a WebSocket session lives as long as its client keeps answering pings.
	RequestReadTimeout  = 30 * time.Second
	RequestWriteTimeout = 30 * time.Second
	// IdleTimeout closes a keep-alive connection that sends no next request for this long
	// (probe loops hitting /readyz reuse their connection within a second or two).
	IdleTimeout = 30 * time.Second
	// MaxHeaderBytes bounds a request's header block, in bytes. A bearer JWT with a few
	// claims is under 1 KiB; Go's default (1 MiB) per connection times MaxConns would let
	// idle clients pin hundreds of MiB.
	MaxHeaderBytes = 64 << 10

	// DefaultMaxConns caps open TCP connections of the listener (WebSockets included).
	// A local executor serves a handful of harnesses; 512 leaves a wide margin while
	// keeping the listener far from the descriptor limit the executor's own processes
	// need (pipes, PTYs, files). When the process's RLIMIT_NOFILE is lower, the cap
	// becomes FDShareForConns of it (see maxConnsFor).
	DefaultMaxConns = 512
	// FDShareForConns is the fraction (1/n) of the soft RLIMIT_NOFILE the listener may
	// use for connections: half, the other half being for processes and files.
	FDShareForConns = 2
	// MinMaxConns is the floor of the derived cap, so a tiny RLIMIT_NOFILE still admits
	// a few clients.
	MinMaxConns = 8

	// MaxInFlightUpgrades bounds upgrade requests being checked and switched at the same
	// time (auth check + 101 response); further ones get 503 at once. A handshake takes
	// microseconds, so 64 concurrent ones only happen under a flood.
	MaxInFlightUpgrades = 64

	// MaxPeerScanFDs bounds the descriptors inspected (readlink of /proc/<pid>/fd/*) to
	// find which sandboxed descendant holds a loopback client socket, per upgrade on a
	// listener without auth. Sandboxed commands hold tens of descriptors; the bound keeps
	// one that opens thousands from making every upgrade slow. Past it the check gives up
	// and the upgrade proceeds (best effort; --ws-auth is the guarantee).
	MaxPeerScanFDs = 1 << 14
)
