package refbin

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// Versions are the reference releases the executor must be wire-compatible with, newest
// first. scripts/install-reference.sh keeps the same list (checked by a test).
var Versions = []string{"0.171.0", "0.169.0"}

// Newest is the release the executor behaves as (and the bench measures against).
var Newest = Versions[0]

// Release is one installed reference release.
type Release struct {
	Version string // as the binary's `--version` reports it, e.g. "0.171.0"
	Path    string // absolute path of the `codex` binary
}

// versionTimeout bounds one `codex --version`.
const versionTimeout = 20 * time.Second

var (
	lookupOnce sync.Once
	found      map[string]string // version → path, guarded by lookupOnce
	missing    map[string]string // version → why it is unavailable, guarded by lookupOnce
)

// RepoRoot returns the repository root (the directory holding go.mod).
func RepoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}

// lookup finds every release in Versions (see the package doc).
func lookup() {
	lookupOnce.Do(func() {
		found = map[string]string{}
		missing = map[string]string{}
		var notes []string
		candidates := filepath.SplitList(os.Getenv("EXECUTOR_REFERENCE_BINS"))
		if p := os.Getenv("EXECUTOR_REFERENCE_BIN"); p != "" {
			candidates = append(candidates, p)
		}
		for _, p := range candidates {
			if p == "" {
				continue
			}
			v, err := BinaryVersion(p)
			switch {
			case err != nil:
				notes = append(notes, err.Error())
			case !supported(v):
				notes = append(notes, fmt.Sprintf("%s is codex %s, not one of %s", p, v, strings.Join(Versions, ", ")))
			case found[v] == "":
				found[v] = p
			}
		}
		for _, v := range Versions {
			if found[v] != "" {
				continue
			}
			p, err := install(v)
			if err == nil {
				var got string
				if got, err = BinaryVersion(p); err == nil && got != v {
					err = fmt.Errorf("%s reports codex %s", p, got)
				}
			}
			if err != nil {
				missing[v] = strings.Join(append(notes, "installing "+v+": "+err.Error()), "; ")
				continue
			}
			found[v] = p
		}
	})
}

func supported(v string) bool {
	for _, s := range Versions {
		if s == v {
			return true
		}
	}
	return false
}

// install runs scripts/install-reference.sh for version and returns the path it prints.
func install(version string) (string, error) {
	cmd := exec.Command(filepath.Join(RepoRoot(), "scripts", "install-reference.sh"))
	cmd.Env = append(os.Environ(), "REFERENCE_CODEX_VERSION="+version)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("%v: %s", err, strings.TrimSpace(stderr.String()))
	}
	return strings.TrimSpace(string(out)), nil
}

// BinaryVersion runs `bin --version` and returns the version it prints ("codex-cli
// 0.171.0" → "0.171.0").
func BinaryVersion(bin string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), versionTimeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, bin, "--version").Output()
	if err != nil {
		return "", fmt.Errorf("%s --version: %v", bin, err)
	}
	f := strings.Fields(string(out))
	if len(f) != 2 || f[0] != "codex-cli" {
		return "", fmt.Errorf("%s --version printed %q, want \"codex-cli <version>\"", bin, out)
	}
	return f[1], nil
}

// unavailable fails (CI=true) or skips tb because release v cannot be found.
func unavailable(tb testing.TB, v string) {
	tb.Helper()
	if os.Getenv("CI") == "true" {
		tb.Fatalf("reference %s unavailable under CI=true (every release is required): %s", v, missing[v])
	}
	tb.Skipf("reference %s unavailable (set EXECUTOR_REFERENCE_BINS or install npm): %s", v, missing[v])
}

// Lookup returns release v without a test: ok is false (with the reason) when it cannot
// be found. For TestMain-time setup; tests use ReleaseOf, Releases or ForEachRelease.
func Lookup(v string) (r Release, ok bool, why string) {
	lookup()
	if p := found[v]; p != "" {
		return Release{Version: v, Path: p}, true, ""
	}
	if !supported(v) {
		return Release{}, false, v + " is not one of " + strings.Join(Versions, ", ")
	}
	return Release{}, false, missing[v]
}

// ReleaseOf returns release v, failing (CI) or skipping tb when it cannot be found.
func ReleaseOf(tb testing.TB, v string) Release {
	tb.Helper()
	r, ok, _ := Lookup(v)
	if !ok {
		unavailable(tb, v)
	}
	return r
}

// Releases returns the available releases of Versions, newest first. A missing release
// fails tb under CI=true (the others are still returned, so the test can go on) and is
// logged elsewhere; when none is available, tb fails (CI) or is skipped.
func Releases(tb testing.TB) []Release {
	tb.Helper()
	lookup()
	ci := os.Getenv("CI") == "true"
	var out []Release
	for _, v := range Versions {
		if p := found[v]; p != "" {
			out = append(out, Release{Version: v, Path: p})
			continue
		}
		if ci {
			tb.Errorf("reference %s unavailable under CI=true (every release is required): %s", v, missing[v])
		} else {
			tb.Logf("reference %s unavailable, not compared: %s", v, missing[v])
		}
	}
	if len(out) == 0 {
		unavailable(tb, Newest)
	}
	return out
}

// Reference returns the path of the newest release (Newest), failing (CI) or skipping
// the test when it cannot be found. For tests that measure rather than compare.
func Reference(tb testing.TB) string {
	tb.Helper()
	return ReleaseOf(tb, Newest).Path
}

// BuildExecutor builds ./cmd/executor into dir and returns the binary's path. It builds
// as releases are built, with CGO_ENABLED=0: a static binary, so no sandbox stage of
// it can be made to load a library by the environment (a test binary built with -race
// needs cgo; the executor it starts does not).
func BuildExecutor(dir string) (string, error) {
	bin := filepath.Join(dir, "executor")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/executor")
	cmd.Dir = RepoRoot()
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
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
