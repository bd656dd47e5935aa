// Package refbin locates the released reference binary (`codex`, npm @openai/codex
// 0.169.0) and this repository's executor binary for tests that run both.
//
// Lookup of the reference: $EXECUTOR_REFERENCE_BIN, else scripts/install-reference.sh
// (which installs it with npm once). When CI=true a missing reference fails the test;
// elsewhere the test is skipped with the reason, because developers may lack npm.
package refbin

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
)

var (
	refOnce sync.Once
	refPath string
	refErr  string
)

// RepoRoot returns the repository root (the directory holding go.mod).
func RepoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}

// Reference returns the path of the reference binary, failing (CI) or skipping the test
// when it cannot be found.
func Reference(tb testing.TB) string {
	tb.Helper()
	refOnce.Do(func() {
		if p := os.Getenv("EXECUTOR_REFERENCE_BIN"); p != "" {
			refPath = p
			return
		}
		out, err := exec.Command(filepath.Join(RepoRoot(), "scripts", "install-reference.sh")).Output()
		if err != nil {
			refErr = "installing reference binary: " + err.Error()
			return
		}
		refPath = strings.TrimSpace(string(out))
	})
	if refPath == "" {
		if os.Getenv("CI") == "true" {
			tb.Fatalf("reference binary unavailable under CI: %s", refErr)
		}
		tb.Skipf("reference binary unavailable (set EXECUTOR_REFERENCE_BIN or install npm): %s", refErr)
	}
	return refPath
}

// BuildExecutor builds ./cmd/executor into dir and returns the binary's path.
func BuildExecutor(dir string) (string, error) {
	bin := filepath.Join(dir, "executor")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/executor")
	cmd.Dir = RepoRoot()
	cmd.Stderr = os.Stderr
	return bin, cmd.Run()
}

// CodexHome makes a fresh CODEX_HOME outside temporary directories (the reference
// refuses to set up its sandbox helpers under /tmp).
func CodexHome(tb testing.TB) string {
	tb.Helper()
	if err := os.MkdirAll("/var/tmp/executor-tests", 0o755); err != nil {
		tb.Fatal(err)
	}
	d, err := os.MkdirTemp("/var/tmp/executor-tests", "codex-home-")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { os.RemoveAll(d) })
	return d
}
