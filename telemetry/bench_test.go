package telemetry_test

import (
	"testing"
	"time"

	"github.com/execlab/executor/executor/process"
	"github.com/execlab/executor/relay/mux"
	"github.com/execlab/executor/telemetry"
)

// BenchmarkExecutorObserver is the metrics cost the hot paths pay per event: one request
// (counter + histogram), one output chunk, one process start and exit, one dropped
// frame. Compare with the cost of the event itself (docs/bench.md, Observability
// overhead).
func BenchmarkExecutorObserver(b *testing.B) {
	e := telemetry.NewExecutor(telemetry.NewRegistry())
	b.Run("request", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			e.RequestHandled("process/read", "0", 150*time.Microsecond)
		}
	})
	b.Run("output_chunk", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			e.OutputBytes(65536)
		}
	})
	b.Run("process_lifetime", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			e.ProcessStarted()
			e.ProcessExited(process.ExitOK)
		}
	})
	b.Run("frame_dropped", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			e.FrameDropped(mux.DropMalformed)
		}
	})
	b.Run("parallel_request", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				e.RequestHandled("process/read", "0", 150*time.Microsecond)
			}
		})
	})
}
