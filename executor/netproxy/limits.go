package netproxy

import "time"

// Wire limits, fixed by the reference (spec/network-proxy.md).
const (
	// MaxCallbackProcessIDBytes bounds the processId of a process with policy callbacks
	// enabled, in bytes (§2.2 step 4; exactly 256 is accepted).
	MaxCallbackProcessIDBytes = 256
)

// Implementation limits (our choice).
const (
	// maxHeadBytes bounds a request line plus headers on the HTTP listener; a longer
	// head is answered 400 and the connection closed.
	maxHeadBytes = 64 << 10
	// headTimeout bounds reading a request head (HTTP) or a greeting and request
	// (SOCKS5); a client that stalls longer is disconnected.
	headTimeout = 30 * time.Second
	// upstreamDialTimeout bounds one upstream TCP connect, resolution included; a
	// failure answers 502 "upstream failure" (HTTP) or a SOCKS5 failure reply.
	upstreamDialTimeout = 10 * time.Second
	// maxTrackedConns bounds the open connections of one proxy, client and upstream
	// sides together (a tunnel holds two, plus two splice pipes: about 6 descriptors);
	// beyond it a new connection is closed at once (the child sees a reset, or the proxy
	// a failed upstream). 4,096 = 2,048 tunnels: the reference held 1,000 tunnels
	// through one proxy (probed by the proxy_idle_memory row), where 512 reset the 257th.
	maxTrackedConns = 4096
)
