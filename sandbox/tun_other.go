//go:build !linux

package sandbox

// TransparentTCPAvailable is false off Linux: transparent TCP is Linux-only.
func TransparentTCPAvailable() bool { return false }
