package sandbox_test

import (
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/execlab/executor/internal/reexec"
)

// TestMain lets the test binary re-enter itself as the sandbox stages, exactly as
// cmd/executor does (with one in-process point of its own, inProcessProbe), and act as
// the in-sandbox probe program, then runs the tests under a goroutine-leak gate.
func TestMain(m *testing.M) {
	reexec.Register(reexec.Point{Args: []string{inProcessFlag}, InProcess: true,
		Run: func([]string) int { return inProcessProbe() }})
	reexec.TestMain()
	if name := os.Getenv(probeEnv); name != "" {
		reexec.Exit(runProbeProgram(name, os.Args[1:]))
	}
	goleak.VerifyTestMain(m)
}
