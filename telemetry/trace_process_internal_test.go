package telemetry

import (
	"context"
	"testing"
	"time"

	"go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/execlab/executor/executor/process"
)

// TestProcessEnder: spans handed over before stop are ended by the goroutine with their
// reap time and exit class; stop waits for them; a span handed over after stop (a late
// reap) is ended inline, not lost, and nothing panics.
func TestProcessEnder(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := trace.NewTracerProvider(trace.WithSpanProcessor(rec))
	defer func() { _ = tp.Shutdown(context.Background()) }()
	tr := tp.Tracer("test")
	var e processEnder
	e.start()
	reaped := time.Unix(1_700_000_000, 0)
	for _, class := range []process.ExitClass{process.ExitOK, process.ExitSignal} {
		_, span := tr.Start(context.Background(), "process")
		e.send(spanEnd{span: span, class: class, at: reaped})
	}
	e.stop()
	_, late := tr.Start(context.Background(), "process")
	e.send(spanEnd{span: late, class: process.ExitError, at: reaped})
	e.stop() // idempotent
	ended := rec.Ended()
	if len(ended) != 3 {
		t.Fatalf("ended spans: got %d, want 3", len(ended))
	}
	for i, want := range []process.ExitClass{process.ExitOK, process.ExitSignal, process.ExitError} {
		s := ended[i]
		if !s.EndTime().Equal(reaped) {
			t.Errorf("span %d end time: got %v, want the reap time %v", i, s.EndTime(), reaped)
		}
		var got string
		for _, kv := range s.Attributes() {
			if kv.Key == "process.exit_class" {
				got = kv.Value.AsString()
			}
		}
		if got != string(want) {
			t.Errorf("span %d process.exit_class: got %q, want %q", i, got, want)
		}
	}
}
