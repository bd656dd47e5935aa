package main

import (
	"slices"
	"testing"

	"go.uber.org/goleak"

	"github.com/execlab/executor/cmd/executor/internal/bench"
	"github.com/execlab/executor/executor/process"
	"github.com/execlab/executor/internal/reexec"
	"github.com/execlab/executor/sandbox"
)

// TestMain dispatches the re-entry points first, as main does (a test that serves
// in-process starts the process guard from this test binary), then fails the package
// when a test leaves goroutines behind (the stdin pump, the remote run loop). Idle HTTP
// keep-alive connections of the registry client are allowed.
func TestMain(m *testing.M) {
	reexec.TestMain()
	goleak.VerifyTestMain(m, goleak.IgnoreTopFunction("net/http.(*persistConn).writeLoop"),
		goleak.IgnoreTopFunction("net/http.(*persistConn).readLoop"),
		goleak.IgnoreTopFunction("internal/poll.runtime_pollWait"))
}

// TestReexec_AllPoints: the executor links every re-entry point it starts (issue 27):
// the sandbox stages, the fs helper (also in-process), the process guard and the bench
// helper, and nothing else.
func TestReexec_AllPoints(t *testing.T) {
	want := [][]string{{sandbox.StageFlag}, {sandbox.FSHelperFlag}, {process.GuardArg}, {"bench", bench.HelperArg}}
	got := reexec.Points()
	cmp := func(a, b []string) int { return slices.Compare(a, b) }
	slices.SortFunc(want, cmp)
	slices.SortFunc(got, cmp)
	if !slices.EqualFunc(got, want, slices.Equal[[]string]) {
		t.Errorf("re-entry points = %q, want %q", got, want)
	}
	if reexec.InProcessFunc(sandbox.FSHelperFlag) == nil {
		t.Errorf("the fs helper is not an in-process point")
	}
}
