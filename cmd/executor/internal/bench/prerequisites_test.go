package bench

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
)

// TestMeasureRow_MissingPrerequisiteSkips: a row whose prerequisite is absent (here the
// PostgreSQL row without a DSN) is reported as skipped with its reason, is not a failed
// row, and so does not make `executor bench` exit non-zero (issue 30).
func TestMeasureRow_MissingPrerequisiteSkips(t *testing.T) {
	t.Setenv("EXECUTOR_BENCH_POSTGRES_DSN", "")
	t.Setenv("EXECUTOR_TEST_POSTGRES_DSN", "")
	row, ok := rowByName("registry_connect_pg3")
	if !ok {
		t.Fatal("registry_connect_pg3 is not registered")
	}
	var progress bytes.Buffer
	res := RowResult{Row: row.Name}
	measureRow(context.Background(), &Env{}, row, []*Side{{Target: Target{Name: "ours"}}}, 1, &progress, &res)
	if res.Status != StatusSkipped || !strings.Contains(res.Error, "EXECUTOR_BENCH_POSTGRES_DSN") {
		t.Fatalf("got status %q (%s), want %q naming the DSN variable", res.Status, res.Error, StatusSkipped)
	}
	if !strings.Contains(progress.String(), "registry_connect_pg3: skipped:") {
		t.Errorf("progress %q does not say the row was skipped", progress.String())
	}
	rep := &Report{Rows: []RowResult{res}}
	if f := rep.Failed(); len(f) != 0 {
		t.Errorf("Failed() = %+v, want no failed rows", f)
	}
}

// TestMeasureRow_OtherErrorsFail: an error that is not a missing prerequisite still fails
// the row (a wrong measurement is never silently skipped).
func TestMeasureRow_OtherErrorsFail(t *testing.T) {
	row := Row{Name: "x", Measure: func(context.Context, *Env, *Side) (float64, error) {
		return 0, fmt.Errorf("%w: short read", errDataLoss)
	}}
	res := RowResult{Row: row.Name}
	measureRow(context.Background(), &Env{}, row, []*Side{{Target: Target{Name: "ours"}}}, 1, &bytes.Buffer{}, &res)
	if res.Status != StatusFailed {
		t.Fatalf("got status %q, want %q", res.Status, StatusFailed)
	}
}
