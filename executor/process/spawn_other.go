//go:build !linux

package process

import (
	"errors"
	"os"

	"github.com/execlab/executor/executor/protocol"
	"github.com/execlab/executor/sandbox"
)

type spawnSpec struct {
	argv       []string
	arg0       *string
	cwd        string
	env        map[string]string
	tty        bool
	pipeStdin  bool
	ptySize    *protocol.PtySize // initial PTY size; nil = ptyRows×ptyCols
	wrapped    *sandbox.Command
	extraFiles []*os.File
}

type spawned struct {
	proc    *os.Process
	outputs []*os.File
	stdin   *os.File
}

func (s *spawned) closeAll() {}

// spawn is unsupported off Linux: Setsid/Pdeathsig semantics and the reference's texts
// were only pinned there.
func spawn(*spawnSpec) (*spawned, error) {
	return nil, errors.New("process spawning is unsupported on this platform")
}
