package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/execlab/executor/internal/refbin"
)

// oursBin is the executor binary built by TestMain.
var oursBin string

func TestMain(m *testing.M) { refbin.MainWithExecutor(m, "bench-test-", &oursBin) }

// findReference locates the newest reference release, the one the bench measures against
// (internal/refbin; under CI=true a missing binary fails the test).
func findReference(t *testing.T) string { return refbin.Reference(t) }

func targets(t *testing.T) (Target, *Target) {
	ref := ReferenceTarget(findReference(t))
	return OursTarget(oursBin), &ref
}

// helperArgv runs the helper process from the executor built by TestMain.
func helperArgv() []string { return []string{oursBin, "bench", HelperArg} }

// TestRun_QuickProducesNumbersForEveryAvailableRow is the CI check of issue 7: every
// available row yields numbers (for both sides, or for ours alone on an OursOnly row) and
// no bytes are lost. No timing assertions.
func TestRun_QuickProducesNumbersForEveryAvailableRow(t *testing.T) {
	ours, ref := targets(t)
	// A deadline against a hung row, not a timing assertion: generous, because a loaded
	// machine slows every row and some rows (a 5 s cut, two streams) have fixed costs.
	ctx, cancel := context.WithTimeout(context.Background(), 9*time.Minute)
	defer cancel()
	var progress bytes.Buffer
	rep, err := Run(ctx, Config{Ours: ours, Reference: ref, Quick: true, Progress: &progress, Helper: helperArgv()})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Rows) != len(Rows()) {
		t.Errorf("got %d rows, want every registered row (%d)", len(rep.Rows), len(Rows()))
	}
	progressLines := 0
	for _, row := range rep.Rows {
		r, _ := rowByName(row.Row)
		if r.Measure == nil {
			if row.Status != StatusUnavailable || row.Ours != nil || row.Reference != nil {
				t.Errorf("%s: got status %q with numbers %v/%v, want %q and none", row.Row, row.Status, row.Ours, row.Reference, StatusUnavailable)
			}
			continue
		}
		sides := map[string]*Stats{"ours": row.Ours, "reference": row.Reference}
		if r.OursOnly {
			delete(sides, "reference")
		}
		progressLines += (QuickRuns + 1) * len(sides)
		if row.Status != StatusOK {
			t.Errorf("%s: got status %q (%s), want ok", row.Row, row.Status, row.Error)
			continue
		}
		for side, st := range sides {
			if st == nil || len(st.Samples) != QuickRuns {
				t.Errorf("%s %s: got stats %+v, want %d samples", row.Row, side, st, QuickRuns)
				continue
			}
			// ≥ 0, not > 0: a memory-growth row (http_stream_rss) can measure no growth.
			if !(st.Min >= 0 && st.Min <= st.Median && st.Median <= st.Max && !math.IsInf(st.Max, 0)) {
				t.Errorf("%s %s: got min %v median %v max %v, want finite 0 ≤ min ≤ median ≤ max", row.Row, side, st.Min, st.Median, st.Max)
			}
		}
		switch {
		case r.OursOnly && (row.Reference != nil || row.Ratio != nil):
			t.Errorf("%s: got reference %v ratio %v on an ours-only row, want null", row.Row, row.Reference, row.Ratio)
		case !r.OursOnly && row.Reference != nil && row.Reference.Median > 0 && (row.Ratio == nil || *row.Ratio < 0):
			t.Errorf("%s: got ratio %v, want a number", row.Row, row.Ratio)
		}
	}
	// Every row of issue 7 is measured; only rows added later may be placeholders.
	for _, name := range issue7Rows {
		if r, ok := rowByName(name); !ok || r.Measure == nil {
			t.Errorf("row %s: not registered with a Measure function", name)
		}
	}
	if failed := rep.Failed(); len(failed) > 0 {
		t.Errorf("got failed rows %+v, want none", failed)
	}
	// One progress line per sample: (warm-up + runs) × sides per available row.
	if got, want := strings.Count(progress.String(), "\n"), progressLines; got != want {
		t.Errorf("got %d progress lines, want %d:\n%s", got, want, progress.String())
	}

	var js bytes.Buffer
	if err := WriteJSON(&js, rep); err != nil {
		t.Fatal(err)
	}
	var decoded []map[string]any
	if err := json.Unmarshal(js.Bytes(), &decoded); err != nil {
		t.Fatalf("decoding JSON report: %v", err)
	}
	for _, row := range decoded {
		for _, k := range []string{"row", "unit", "ours", "reference", "ratio", "goal", "met"} {
			if _, ok := row[k]; !ok {
				t.Errorf("JSON row %v: missing %q", row["row"], k)
			}
		}
	}
	var table bytes.Buffer
	if err := WriteTable(&table, rep); err != nil {
		t.Fatal(err)
	}
	for _, row := range rep.Rows {
		if !strings.Contains(table.String(), row.Row) {
			t.Errorf("table lacks row %s:\n%s", row.Row, table.String())
		}
	}
	t.Logf("\n%s", table.String())
}

// issue7Rows are the rows issue 7 asks for.
var issue7Rows = []string{
	"oneshot_local", "stdout_local", "readblock_local", "walk_local", "http_stream_local",
	"handshakes", "relay_stream", "oneshot_remote", "rss_idle", "idle_stream_memory",
	"rendezvous_idle_memory",
	// issue 16
	"stdout_cpu", "relay_cpu", "stdout_parallel", "handshakes_responder",
}

func TestRun_OnlySelectsRows(t *testing.T) {
	ours := OursTarget(oursBin)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	rep, err := Run(ctx, Config{Ours: ours, Only: []string{"oneshot_local,handshakes"}, Quick: true, Runs: 1})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range rep.Rows {
		got = append(got, r.Row+"="+r.Status)
	}
	if want := "[oneshot_local=ok handshakes=ok]"; fmt.Sprint(got) != want {
		t.Errorf("got rows %v, want %s", got, want)
	}
	row := rep.Rows[0]
	if row.Reference != nil || row.Ratio != nil || row.Met {
		t.Errorf("got reference %v ratio %v met %v without a reference, want nil, nil, false", row.Reference, row.Ratio, row.Met)
	}
	if _, err := Run(ctx, Config{Ours: ours, Only: []string{"nope"}}); err == nil || !strings.Contains(err.Error(), `unknown row "nope"`) {
		t.Errorf("got %v for an unknown row, want an unknown-row error", err)
	}
}

func TestGoal_Met(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	relayGoal := Goal{Kind: OursAtLeast, Value: 200, Also: &Goal{Kind: RatioAtLeast, Value: 2}}
	if got, want := relayGoal.String(), "≥ 200 and ≥ 2× ref"; got != want {
		t.Errorf("got goal %q, want %q", got, want)
	}
	tests := []struct {
		goal     Goal
		ours     float64
		ratio    *float64
		met, dec bool
	}{
		{Goal{Kind: RatioAtMost, Value: 0.1}, 1, f(0.05), true, true},
		{Goal{Kind: RatioAtMost, Value: 0.1}, 1, f(0.5), false, true},
		{Goal{Kind: RatioAtLeast, Value: 5}, 1, f(5), true, true},
		{Goal{Kind: RatioAtLeast, Value: 5}, 1, f(1.2), false, true},
		{Goal{Kind: RatioAtLeast, Value: 5}, 1, nil, false, false},
		{Goal{Kind: OursAtMost, Value: 20}, 9.5, nil, true, true},
		{Goal{Kind: OursAtMost, Value: 20}, 21, f(0.5), false, true},
		{Goal{Kind: OursAtLeast, Value: 2000}, 2500, nil, true, true},
		{Goal{Kind: OursAtLeast, Value: 2000}, 1500, nil, false, true},
		{relayGoal, 250, f(2.5), true, true},
		{relayGoal, 250, f(1.5), false, true},
		{relayGoal, 150, f(2.5), false, true},
		{relayGoal, 250, nil, false, false},
	}
	for _, tc := range tests {
		met, dec := tc.goal.met(Stats{Median: tc.ours}, tc.ratio)
		if met != tc.met || dec != tc.dec {
			t.Errorf("%s with ours %v ratio %v: got (%v, %v), want (%v, %v)", tc.goal, tc.ours, tc.ratio, met, dec, tc.met, tc.dec)
		}
	}
}

func TestSummarize(t *testing.T) {
	tests := []struct {
		in            []float64
		med, min, max float64
	}{
		{[]float64{3}, 3, 3, 3},
		{[]float64{3, 1}, 2, 1, 3},
		{[]float64{5, 1, 3}, 3, 1, 5},
	}
	for _, tc := range tests {
		s := summarize(tc.in)
		if s.Median != tc.med || s.Min != tc.min || s.Max != tc.max {
			t.Errorf("summarize(%v): got %v/%v/%v, want %v/%v/%v", tc.in, s.Median, s.Min, s.Max, tc.med, tc.min, tc.max)
		}
	}
}

func TestVmRSS_Self(t *testing.T) {
	kib, err := vmRSS(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if kib <= 0 {
		t.Errorf("got VmRSS %d KiB for this process, want > 0", kib)
	}
}
