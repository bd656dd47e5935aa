//go:build !linux

package process

import (
	"errors"
	"os"
	"syscall"
)

func captureSysProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setsid: true} }

// memFile is Linux-only; elsewhere the start falls back to running unsnapshotted.
func memFile(string, string) (*os.File, error) {
	return nil, errors.New("shell snapshot state files need memfd_create")
}
