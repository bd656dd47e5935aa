//go:build !unix

package execcli

import (
	"os"

	"github.com/execlab/executor/executor/protocol"
)

var forwardedSignals = []os.Signal{os.Interrupt}

var winchSignal os.Signal

func posixName(s os.Signal) (protocol.PosixSignal, bool) {
	if s == os.Interrupt {
		return protocol.SignalINT, true
	}
	return "", false
}
