package sandboxtest

import (
	"context"
	"os"
	"sync"
	"testing"

	"github.com/execlab/executor/sandbox"
)

var (
	mu      sync.Mutex
	reports = map[string]sandbox.Report{} // by forced backend ("" = auto)
)

// Report returns the host probe with backend forced ("" = auto), probed once per process.
func Report(backend string) sandbox.Report {
	mu.Lock()
	defer mu.Unlock()
	r, ok := reports[backend]
	if !ok {
		r = sandbox.Probe(context.Background(), &sandbox.ProbeOptions{Backend: backend})
		reports[backend] = r
	}
	return r
}

// Require returns the probe report for want (sandbox.BackendBubblewrap, which the
// automatic choice must pick, or sandbox.BackendLandlock, forced), skipping locally or
// failing under CI=true when the host selects another backend.
func Require(t testing.TB, want string) sandbox.Report {
	t.Helper()
	forced := want
	if want == sandbox.BackendBubblewrap {
		forced = ""
	}
	r := Report(forced)
	if r.Backend != want {
		msg := want + " backend unavailable: " + r.LogLine()
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return r
}

// Launcher is Require's report as a Launcher with default options.
func Launcher(t testing.TB, want string) *sandbox.Launcher {
	t.Helper()
	return sandbox.NewLauncher(Require(t, want), nil)
}
