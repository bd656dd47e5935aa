//go:build !linux

package tunnel

import "net"

// waitReadable is a no-op off Linux: the read itself waits (holding its buffer).
func waitReadable(net.Conn) {}
