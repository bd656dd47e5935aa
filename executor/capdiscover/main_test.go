package capdiscover_test

import (
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/execlab/executor/executor/fs"
	"github.com/execlab/executor/internal/reexec"
	"github.com/execlab/executor/sandbox"
)

// TestMain lets the test binary re-enter itself as the sandbox stages and as the
// filesystem helper (which runs sandboxed root scans), as cmd/executor does, then runs
// the tests under a goroutine-leak gate.
func TestMain(m *testing.M) {
	if handled, code := sandbox.MaybeRunStageWith(os.Args, &sandbox.StageOptions{
		InProcess: map[string]func() int{sandbox.FSHelperFlag: fs.HelperMain},
	}); handled {
		reexec.Exit(code)
	}
	if handled, code := fs.MaybeRunHelper(os.Args, os.Stdin, os.Stdout); handled {
		reexec.Exit(code)
	}
	goleak.VerifyTestMain(m)
}
