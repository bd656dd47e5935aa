//go:build !linux

package serve

import "net/netip"

// sandboxedPeer returns 0: finding a connection's process needs Linux /proc, and the
// executor's sandbox is Linux-only.
func sandboxedPeer(local, remote netip.AddrPort) (int, error) { return 0, nil }
