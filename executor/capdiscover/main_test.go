package capdiscover_test

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/execlab/executor/internal/reexec"
)

// TestMain lets the test binary re-enter itself as the sandbox stages and as the
// filesystem helper (which runs sandboxed root scans), as cmd/executor does, then runs
// the tests under a goroutine-leak gate.
func TestMain(m *testing.M) {
	reexec.TestMain()
	goleak.VerifyTestMain(m)
}
