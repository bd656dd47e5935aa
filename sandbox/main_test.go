package sandbox_test

import (
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/execlab/executor/internal/reexec"
	"github.com/execlab/executor/sandbox"
)

// TestMain lets the test binary re-enter itself as the sandbox stages, exactly as
// cmd/executor does (with one in-process command, inProcessProbe), and act as the in-sandbox probe program, then runs the tests
// under a goroutine-leak gate.
func TestMain(m *testing.M) {
	if handled, code := sandbox.MaybeRunStageWith(os.Args, &sandbox.StageOptions{
		InProcess: map[string]func() int{inProcessFlag: inProcessProbe},
	}); handled {
		reexec.Exit(code)
	}
	if name := os.Getenv(probeEnv); name != "" {
		reexec.Exit(runProbeProgram(name, os.Args[1:]))
	}
	goleak.VerifyTestMain(m)
}
