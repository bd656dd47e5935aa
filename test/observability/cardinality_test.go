//go:build linux

package observability_test

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strconv"
	"testing"
	"time"
)

// TestCardinality: 1,000 harness streams and 1,000 processes leave the number of metric
// series of both the executor and the registry unchanged (no per-id labels). A warm-up of
// one stream and one process first creates every series the loop's traffic can touch.
func TestCardinality(t *testing.T) {
	if testing.Short() {
		t.Skip("1,000 streams: not in -short")
	}
	n := envInt("EXECUTOR_OBS_CARDINALITY_N", 1000)
	s := startStack(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	round := func(streams, procs int, tag string) {
		t0 := time.Now()
		defer func() { t.Logf("%s: %d streams and %d processes in %v", tag, streams, procs, time.Since(t0)) }()
		for i := range streams {
			c, err := s.dial(ctx, t, nil)
			if err != nil {
				t.Fatalf("stream %d: %v", i, err)
			}
			c.Close()
		}
		c, err := s.dial(ctx, t, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		t.Logf("%s: %d streams in %v", tag, streams, time.Since(t0))
		for i := range procs {
			runProcess(ctx, t, c, fmt.Sprintf("%s-%d", tag, i), "true")
		}
	}
	round(1, 1, "warm")
	before := map[string]map[string]bool{"registry": series(scrape(t, s.registryMetrics)), "executor": series(scrape(t, s.executorMetrics))}
	round(n, n, "load")
	execText := scrape(t, s.executorMetrics)
	after := map[string]map[string]bool{"registry": series(scrape(t, s.registryMetrics)), "executor": series(execText)}
	if got := sample(execText, "executor_processes_started_total"); got < float64(n+1) {
		t.Fatalf("executor_processes_started_total = %v, want >= %d (the load did not run)", got, n+1)
	}
	if got := sample(execText, `executor_relay_handshakes_total{outcome="ok"}`); got < float64(n+2) {
		t.Fatalf(`executor_relay_handshakes_total{outcome="ok"} = %v, want >= %d`, got, n+2)
	}
	for _, who := range []string{"registry", "executor"} {
		var added, removed []string
		for k := range after[who] {
			if !before[who][k] {
				added = append(added, k)
			}
		}
		for k := range before[who] {
			if !after[who][k] {
				removed = append(removed, k)
			}
		}
		sort.Strings(added)
		sort.Strings(removed)
		if len(added)+len(removed) > 0 {
			t.Errorf("%s: %d series before, %d after; added %v; removed %v", who, len(before[who]), len(after[who]), added, removed)
		} else {
			t.Logf("%s: %d series before and after %d streams and %d processes", who, len(after[who]), n, n)
		}
	}
}

// envInt reads a positive count from the environment (a smaller run while iterating).
func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}
