package process

import (
	"fmt"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// captureSysProcAttr: a capture leads its own process group (so a timeout or the
// session's end kills its startup files' background jobs too) and dies with the server.
func captureSysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGKILL}
}

// memFile returns an anonymous file holding content, positioned at 0 (the file
// transport's state descriptor; /dev/fd/N reopens it from the start).
func memFile(name, content string) (*os.File, error) {
	fd, err := unix.MemfdCreate(name, unix.MFD_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("creating state file: %w", err)
	}
	f := os.NewFile(uintptr(fd), name)
	if _, err := f.WriteString(content); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("writing state file: %w", err)
	}
	if _, err := f.Seek(0, 0); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("rewinding state file: %w", err)
	}
	return f, nil
}
