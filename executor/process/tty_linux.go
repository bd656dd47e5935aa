//go:build linux

package process

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"

	"github.com/execlab/executor/executor/protocol"
)

// setWinsize sets the window size of the PTY whose master is f (TIOCSWINSZ). On a
// master, the ioctl resizes the pair and signals the slave's foreground process group
// with SIGWINCH when the size changed. SyscallConn keeps f's descriptor from being closed
// and reused underneath the ioctl.
func setWinsize(f *os.File, s *protocol.PtySize) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	ws := &unix.Winsize{Row: s.Rows, Col: s.Cols, Xpixel: s.PixelWidth, Ypixel: s.PixelHeight}
	var ioErr error
	if err := rc.Control(func(fd uintptr) { ioErr = unix.IoctlSetWinsize(int(fd), unix.TIOCSWINSZ, ws) }); err != nil {
		return err
	}
	return ioErr
}

// ttyEOFChar returns the terminal's VEOF character. TCGETS on a Linux PTY master reports
// the slave's termios (tty_mode_ioctl uses the linked tty), which is what the child's
// line discipline applies. Falls back to ^D (defaultVEOF) when it cannot be read or is
// disabled (_POSIX_VDISABLE, 0).
func ttyEOFChar(f *os.File) byte {
	rc, err := f.SyscallConn()
	if err != nil {
		return defaultVEOF
	}
	c := byte(defaultVEOF)
	_ = rc.Control(func(fd uintptr) {
		if t, err := unix.IoctlGetTermios(int(fd), unix.TCGETS); err == nil && t.Cc[unix.VEOF] != 0 {
			c = t.Cc[unix.VEOF]
		}
	})
	return c
}

// isClosedFile reports whether err says the file was already closed.
func isClosedFile(err error) bool { return errors.Is(err, os.ErrClosed) }
