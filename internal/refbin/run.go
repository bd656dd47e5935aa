package refbin

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
)

// ForEachRelease runs fn once per release in Versions, newest first, each in a subtest
// named by the version (`t.Run("0.171.0", …)`). A release that cannot be found fails its
// subtest under CI=true and skips it elsewhere, with the reason. Each subtest's outcome is
// recorded (Track) under the package of the caller.
func ForEachRelease(t *testing.T, fn func(t *testing.T, r Release)) {
	t.Helper()
	pkg := callerPackage(2)
	for _, v := range Versions {
		t.Run(v, func(t *testing.T) {
			track(t, pkg, v)
			r := ReleaseOf(t, v)
			t.Logf("reference %s: %s", r.Version, r.Path)
			fn(t, r)
		})
	}
}

// Track records t's outcome against release version when t ends (see Record), under the
// package of the caller and the name of t's top-level test. For tests that run a release
// in a subtest of their own making (ForEachRelease does this for its subtests).
func Track(t *testing.T, version string) {
	t.Helper()
	track(t, callerPackage(2), version)
}

// Summarize attaches a one-line detail to the outcome that Track or ForEachRelease records
// for t (t is the tracked subtest), e.g. "95 identical, 2 not applicable (a, b)".
func Summarize(t *testing.T, detail string) {
	details.Store(t, detail)
	t.Log(detail)
}

// details maps a tracked *testing.T to its Summarize line.
var details sync.Map

func track(t *testing.T, pkg, version string) {
	test, _, _ := strings.Cut(t.Name(), "/")
	t.Cleanup(func() { // runs after t and its subtests have finished: the outcome is final
		status := "passed"
		switch {
		case t.Failed():
			status = "FAILED"
		case t.Skipped():
			status = "skipped"
		}
		d, _ := details.LoadAndDelete(t)
		detail, _ := d.(string)
		Record(pkg, version, test, status, detail)
	})
}

// Record appends one outcome to the file named by $EXECUTOR_TEST_SUMMARY, if set, as a
// tab-separated line: package, release, test, status (passed, skipped, FAILED), detail.
// scripts/test.sh sets the variable and prints a line per package and release at the end
// (`go test` hides the output of passing tests). Test processes append concurrently: each
// record is one write on an O_APPEND file.
func Record(pkg, version, test, status, detail string) {
	path := os.Getenv("EXECUTOR_TEST_SUMMARY")
	if path == "" {
		return
	}
	clean := func(s string) string { return strings.NewReplacer("\t", " ", "\n", " ").Replace(s) }
	line := strings.Join([]string{clean(pkg), clean(version), clean(test), clean(status), clean(detail)}, "\t") + "\n"
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		fmt.Fprintln(os.Stderr, "refbin: recording outcome:", err)
		return
	}
	if _, err := f.WriteString(line); err != nil {
		fmt.Fprintln(os.Stderr, "refbin: recording outcome:", err)
	}
	f.Close()
}

// callerPackage returns the module-relative directory of the file skip frames up
// ("test/interop").
func callerPackage(skip int) string {
	_, file, _, ok := runtime.Caller(skip)
	if !ok {
		return "?"
	}
	rel, err := filepath.Rel(RepoRoot(), filepath.Dir(file))
	if err != nil {
		return filepath.Dir(file)
	}
	return filepath.ToSlash(rel)
}
