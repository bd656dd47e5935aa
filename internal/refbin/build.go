package refbin

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"go.uber.org/goleak"
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

// MainWithExecutor is the whole of a TestMain whose tests share an executor built before
// they run: it builds ./cmd/executor (BuildExecutor) into a temporary directory named
// after prefix and stores the binary's path in *bin (a failed build exits 1 before any
// test runs), runs m, removes the directory and, when every test passed, fails the run
// on goroutines still running (goleak.Find).
func MainWithExecutor(m *testing.M, prefix string, bin *string) {
	dir, err := os.MkdirTemp("", prefix)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	*bin, err = BuildExecutor(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, "building executor:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}
