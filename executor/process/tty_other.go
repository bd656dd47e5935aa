//go:build !linux

package process

import (
	"errors"
	"os"

	"github.com/execlab/executor/executor/protocol"
)

// setWinsize is unsupported off Linux (no process can be spawned there; spawn_other.go).
func setWinsize(*os.File, *protocol.PtySize) error {
	return errors.New("terminal resize is unsupported on this platform")
}

// ttyEOFChar returns ^D off Linux.
func ttyEOFChar(*os.File) byte { return defaultVEOF }

func isClosedFile(err error) bool { return errors.Is(err, os.ErrClosed) }
