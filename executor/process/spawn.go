package process

import (
	"os"

	"github.com/execlab/executor/executor/protocol"
	"github.com/execlab/executor/sandbox"
)

// The child a process/start asks for and the child spawn started, on every platform;
// spawn itself is spawn_linux.go (spawn_other.go refuses).

// spawnSpec is everything needed to start a child.
type spawnSpec struct {
	argv      []string // non-empty
	arg0      *string
	cwd       string // native absolute path
	env       map[string]string
	tty       bool
	pipeStdin bool
	ptySize   *protocol.PtySize // initial PTY size; nil = ptyRows×ptyCols
	// wrapped, when non-nil, is the sandbox launcher command to start instead: its Path
	// is used as is (no PATH lookup; the stage resolves argv[0] on the request PATH),
	// with its Args, Env and Dir; arg0 travels in its stage flags.
	wrapped *sandbox.Command
	// extraFiles become the child's descriptors 3, 4, …; nil entries are closed (the
	// shell snapshot's state descriptor, snapshot.go). Unused with wrapped.
	extraFiles []*os.File
}

// spawned is a started child: pid = pgid = sid.
type spawned struct {
	proc    *os.Process
	outputs []*os.File // stdout+stderr, or the PTY master (read side)
	stdin   *os.File   // pipe write end or a PTY master dup; nil = /dev/null
}

// closeAll closes every parent-side file of a child that will not be pumped.
func (s *spawned) closeAll() {
	for _, f := range s.outputs {
		_ = f.Close()
	}
	if s.stdin != nil {
		_ = s.stdin.Close()
	}
}
