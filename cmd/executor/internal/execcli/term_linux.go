//go:build linux

package execcli

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"

	"github.com/execlab/executor/executor/protocol"
)

// IsTerminal reports whether fd is a terminal.
func IsTerminal(fd int) bool {
	_, err := unix.IoctlGetTermios(fd, unix.TCGETS)
	return err == nil
}

// makeRaw puts the terminal fd in raw mode (as cfmakeraw(3)) and returns a function
// restoring the previous settings. The restore uses TCSETS (not TCSETSF), so typed-ahead
// input is kept for the local shell.
func makeRaw(fd int) (func(), error) {
	old, err := unix.IoctlGetTermios(fd, unix.TCGETS)
	if err != nil {
		return nil, err
	}
	t := *old
	t.Iflag &^= unix.IGNBRK | unix.BRKINT | unix.PARMRK | unix.ISTRIP | unix.INLCR | unix.IGNCR | unix.ICRNL | unix.IXON
	t.Oflag &^= unix.OPOST
	t.Lflag &^= unix.ECHO | unix.ECHONL | unix.ICANON | unix.ISIG | unix.IEXTEN
	t.Cflag &^= unix.CSIZE | unix.PARENB
	t.Cflag |= unix.CS8
	t.Cc[unix.VMIN] = 1
	t.Cc[unix.VTIME] = 0
	if err := unix.IoctlSetTermios(fd, unix.TCSETS, &t); err != nil {
		return nil, err
	}
	return func() { _ = unix.IoctlSetTermios(fd, unix.TCSETS, old) }, nil
}

// termSize returns the window size of the terminal fd.
func termSize(fd int) (protocol.PtySize, error) {
	ws, err := unix.IoctlGetWinsize(fd, unix.TIOCGWINSZ)
	if err != nil {
		return protocol.PtySize{}, err
	}
	if ws.Row == 0 || ws.Col == 0 {
		return protocol.PtySize{}, errors.New("terminal reports no size")
	}
	return protocol.PtySize{Rows: ws.Row, Cols: ws.Col, PixelWidth: ws.Xpixel, PixelHeight: ws.Ypixel}, nil
}

// stdinCancelable: Cancel ends a pending Read, so Run waits for the stdin goroutine.
const stdinCancelable = true

// cancelableReader reads a file descriptor without changing its (shared) file status
// flags: it polls the fd together with a wake-up pipe, so Cancel ends a pending Read
// with errCanceled. Used for stdin, whose open file description the local shell shares
// (setting O_NONBLOCK on it would leak to the shell after exit).
type cancelableReader struct {
	fd           int
	wakeR, wakeW *os.File
}

func newCancelableReader(f *os.File) (*cancelableReader, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	return &cancelableReader{fd: int(f.Fd()), wakeR: r, wakeW: w}, nil
}

func (c *cancelableReader) Read(p []byte) (int, error) {
	for {
		fds := []unix.PollFd{{Fd: int32(c.fd), Events: unix.POLLIN}, {Fd: int32(c.wakeR.Fd()), Events: unix.POLLIN}}
		if _, err := unix.Poll(fds, -1); err != nil {
			if errors.Is(err, unix.EINTR) {
				continue
			}
			return 0, err
		}
		if fds[1].Revents != 0 {
			return 0, errCanceled
		}
		if fds[0].Revents == 0 {
			continue
		}
		n, err := unix.Read(c.fd, p)
		switch {
		case errors.Is(err, unix.EINTR), errors.Is(err, unix.EAGAIN):
			continue
		case err != nil:
			return 0, err
		case n == 0:
			return 0, errEOF
		}
		return n, nil
	}
}

// Cancel makes the pending and every later Read return errCanceled.
func (c *cancelableReader) Cancel() { _, _ = c.wakeW.Write([]byte{0}) }

// Close releases the wake-up pipe; call it after the reading goroutine has returned.
func (c *cancelableReader) Close() {
	_ = c.wakeR.Close()
	_ = c.wakeW.Close()
}
