//go:build !linux

package process

import (
	"errors"
	"io"
	"syscall"
)

// StartGuard is unsupported off Linux (spawning is too).
func StartGuard() (*Guard, error) {
	return nil, errors.New("process guard is unsupported on this platform")
}

func guardSysProcAttr() *syscall.SysProcAttr { return nil }

func runGuard(stdin io.Reader) int {
	_, _ = io.Copy(io.Discard, stdin)
	return 0
}
