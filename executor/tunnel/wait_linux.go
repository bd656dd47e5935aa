package tunnel

import (
	"net"
	"syscall"

	"golang.org/x/sys/unix"
)

// waitReadable blocks until nc has data, EOF or an error, without a read buffer: a 1-byte
// MSG_PEEK through the runtime poller. Any failure returns at once (the Read reports it).
func waitReadable(nc net.Conn) {
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return
	}
	var one [1]byte
	_ = rc.Read(func(fd uintptr) bool {
		_, _, err := unix.Recvfrom(int(fd), one[:], unix.MSG_PEEK|unix.MSG_DONTWAIT)
		return err != unix.EAGAIN
	})
}
