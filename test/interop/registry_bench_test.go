package interop_test

import (
	"context"
	"io"
	"slices"
	"testing"
	"time"

	"github.com/execlab/executor/internal/refbin"
)

// BenchmarkRegistry_ExecTrue measures `executor exec -- true` end to end through our registry
// + rendezvous + a remote executor on loopback (process start of the exec binary, connect,
// websocket, hybrid IK handshake, validate, initialize, process/start, exit), against our
// executor and the newest reference release. It reports the p50 and p90 in milliseconds
// (issue 5 budget: p50 ≤ 20 ms).
func BenchmarkRegistry_ExecTrue(b *testing.B) {
	b.Run("ours", func(b *testing.B) { benchExecTrue(b, false) })
	b.Run("reference", func(b *testing.B) { benchExecTrue(b, true) })
}

func benchExecTrue(b *testing.B, reference bool) {
	tt := testing.TB(b)
	var ref *refbin.Release
	if reference {
		r := refbin.ReleaseOf(tt, refbin.Newest)
		b.Logf("reference: codex %s", r.Version)
		ref = &r
	}
	reg := startOurRegistry(tt)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	startOnlineExecutor(tt, ctx, ref, reg, "env-bench")
	oursBinary(tt)
	runExec(tt, ctx, reg, "env-bench", io.Discard, "true") // warm up
	durs := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		if _, code := runExec(tt, ctx, reg, "env-bench", io.Discard, "true"); code != 0 {
			b.Fatalf("executor exec -- true: exit %d", code)
		}
		durs = append(durs, time.Since(start))
	}
	b.StopTimer()
	slices.Sort(durs)
	b.ReportMetric(float64(durs[len(durs)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(durs[len(durs)*9/10].Microseconds())/1000, "p90-ms")
}
