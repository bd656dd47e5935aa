package executor

import (
	"testing"

	"github.com/execlab/executor/executor/process"
)

// TestServer_SessionsShareOneBudget: every session's process table draws on the Server's
// one Budget of Options.MaxUnackedTotalBytes (default process.DefaultMaxUnackedTotalBytes),
// so unacknowledged output is bounded per executor, not per session.
func TestServer_SessionsShareOneBudget(t *testing.T) {
	for _, tc := range []struct {
		total, want int
	}{
		{0, process.DefaultMaxUnackedTotalBytes},
		{5 << 20, 5 << 20},
	} {
		s := NewServer(&Options{MaxUnackedTotalBytes: tc.total})
		a, b := newSessionState(s), newSessionState(s)
		ba, bb := a.procs.UnackedBudget(), b.procs.UnackedBudget()
		if ba == nil || ba != bb {
			t.Errorf("total %d: sessions draw on budgets %p and %p, want one shared", tc.total, ba, bb)
		} else if got := ba.Total(); got != tc.want {
			t.Errorf("total %d: budget of %d bytes, want %d", tc.total, got, tc.want)
		}
		a.Close()
		b.Close()
		s.Close()
	}
}
