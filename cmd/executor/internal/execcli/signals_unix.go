//go:build unix

package execcli

import (
	"os"
	"syscall"

	"github.com/execlab/executor/executor/protocol"
)

// forwardedSignals are the local signals forwarded to the remote process.
var forwardedSignals = []os.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT}

// winchSignal is the window-change signal (nil where none exists).
var winchSignal os.Signal = syscall.SIGWINCH

// posixName maps a forwarded signal to its process/sendSignal name.
func posixName(s os.Signal) (protocol.PosixSignal, bool) {
	switch s {
	case syscall.SIGINT:
		return protocol.SignalINT, true
	case syscall.SIGTERM:
		return protocol.SignalTERM, true
	case syscall.SIGHUP:
		return protocol.SignalHUP, true
	case syscall.SIGQUIT:
		return protocol.SignalQUIT, true
	}
	return "", false
}
