package refbin

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// The executor built once per test binary (Executor), removed by RemoveExecutor.
var (
	buildOnce sync.Once
	buildDir  string
	buildPath string
	buildErr  error
)

// Executor builds ./cmd/executor once per test binary, as releases are built
// (CGO_ENABLED=0, see BuildExecutor), and returns its path; a failed build fails tb with
// the compiler's output. A TestMain that calls it should call RemoveExecutor at its end.
func Executor(tb testing.TB) string {
	tb.Helper()
	buildOnce.Do(func() {
		if buildDir, buildErr = os.MkdirTemp("", "executor-test-bin-"); buildErr != nil {
			return
		}
		buildPath = filepath.Join(buildDir, "executor")
		cmd := exec.Command("go", "build", "-o", buildPath, "./cmd/executor")
		cmd.Dir = RepoRoot()
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("%w: %s", err, out)
		}
	})
	if buildErr != nil {
		tb.Fatalf("building executor: %v", buildErr)
	}
	return buildPath
}

// RemoveExecutor deletes what Executor built; call it from TestMain after m.Run.
func RemoveExecutor() {
	if buildDir != "" {
		os.RemoveAll(buildDir)
	}
}

// Main runs the tests of a package that uses Executor and removes what it built: call it
// as the whole of TestMain.
func Main(m *testing.M) {
	code := m.Run()
	RemoveExecutor()
	os.Exit(code)
}
