package sandbox

import "golang.org/x/sys/unix"

// TransparentTCPAvailable reports whether this host has the tun device that transparent
// TCP's capture opens inside the sandbox (/dev/net/tun, a character device). Without it
// every transparentTcp launch fails closed, so the executor does not advertise the
// capability.
func TransparentTCPAvailable() bool {
	var st unix.Stat_t
	return unix.Stat(tunDevice, &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFCHR
}
