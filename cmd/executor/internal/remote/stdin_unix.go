//go:build unix

package remote

import (
	"os"
	"syscall"
	"time"
)

// pollableStdin re-opens a pipe or socket stdin as a non-blocking *os.File on the runtime
// poller, so that a read blocked in it can be interrupted (SetReadDeadline) and its goroutine
// waited for. O_NONBLOCK is a property of the open file description, which the parent's end
// of a pipe does not share; cleanup restores blocking mode anyway. Terminals and regular
// files are left alone (a non-blocking terminal would upset the shell after we exit).
func pollableStdin(f *os.File) (stdinSource, bool) {
	var st syscall.Stat_t
	if err := syscall.Fstat(int(f.Fd()), &st); err != nil {
		return stdinSource{}, false
	}
	if kind := st.Mode & syscall.S_IFMT; kind != syscall.S_IFIFO && kind != syscall.S_IFSOCK {
		return stdinSource{}, false
	}
	fd, err := syscall.Dup(int(f.Fd()))
	if err != nil {
		return stdinSource{}, false
	}
	syscall.CloseOnExec(fd)
	if err := syscall.SetNonblock(fd, true); err != nil {
		syscall.Close(fd)
		return stdinSource{}, false
	}
	nf := os.NewFile(uintptr(fd), "stdin") // non-blocking: registered with the poller
	return stdinSource{
		r:         nf,
		interrupt: func() { _ = nf.SetReadDeadline(time.Unix(1, 0)) },
		waitable:  true,
		cleanup: func() {
			_ = syscall.SetNonblock(fd, false)
			_ = nf.Close()
		},
	}, true
}
