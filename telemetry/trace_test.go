package telemetry_test

import (
	"context"
	"encoding/hex"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"go.uber.org/goleak"
	"google.golang.org/protobuf/proto"

	"github.com/execlab/executor/executor"
	"github.com/execlab/executor/executor/process"
	"github.com/execlab/executor/telemetry"
)

var otelVars = []string{"OTEL_SDK_DISABLED", "OTEL_TRACES_EXPORTER", "OTEL_EXPORTER_OTLP_ENDPOINT",
	"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL",
	"OTEL_SERVICE_NAME", "OTEL_RESOURCE_ATTRIBUTES",
	"OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_TRACES_HEADERS", "OTEL_EXPORTER_OTLP_TIMEOUT",
	"OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "OTEL_EXPORTER_OTLP_COMPRESSION", "OTEL_EXPORTER_OTLP_TRACES_COMPRESSION",
	"OTEL_EXPORTER_OTLP_CERTIFICATE", "OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE"}

// clearOTel unsets every OTEL_* variable this package reads, for the test.
func clearOTel(t *testing.T) {
	for _, k := range otelVars {
		t.Setenv(k, "")
	}
}

func TestTracingEnabled(t *testing.T) {
	cases := []struct {
		env     map[string]string
		on      bool
		wantErr bool
	}{
		{env: nil, on: false},
		{env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"}, on: true},
		{env: map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://127.0.0.1:4318/v1/traces"}, on: true},
		{env: map[string]string{"OTEL_TRACES_EXPORTER": "otlp"}, on: true},
		{env: map[string]string{"OTEL_TRACES_EXPORTER": "none", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://x"}, on: false},
		{env: map[string]string{"OTEL_SDK_DISABLED": "true", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://x"}, on: false},
		{env: map[string]string{"OTEL_TRACES_EXPORTER": "zipkin"}, wantErr: true},
		{env: map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://x"}, wantErr: true},
		{env: map[string]string{"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "http/protobuf", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc",
			"OTEL_EXPORTER_OTLP_ENDPOINT": "http://x"}, on: true}, // the signal-specific one wins
	}
	for _, c := range cases {
		on, err := telemetry.TracingEnabled(func(k string) string { return c.env[k] })
		if on != c.on || (err != nil) != c.wantErr || (err != nil && !errors.Is(err, telemetry.ErrTraceConfig)) {
			t.Errorf("%v: on=%v err=%v, want on=%v err=%v", c.env, on, err, c.on, c.wantErr)
		}
	}
}

// TestTracingOff: with OTEL_* unset there is no tracer, the observer is returned as is
// (no span hooks: executor.RequestSpan and process.Span are not implemented), nothing is
// exported and no exporter goroutine runs (goleak).
func TestTracingOff(t *testing.T) {
	defer goleak.VerifyNone(t)
	clearOTel(t)
	var posts atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { posts.Add(1) }))
	defer srv.Close()
	tr, err := telemetry.StartTracing(context.Background(), "executor", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
	if err != nil || tr != nil {
		t.Fatalf("StartTracing with OTEL_* unset = %v, %v; want nil, nil", tr, err)
	}
	if obs := telemetry.WithTracing(nil, tr); obs != nil {
		t.Errorf("WithTracing(nil, off) = %T, want nil", obs)
	}
	if err := tr.Shutdown(context.Background()); err != nil {
		t.Errorf("Shutdown of the off tracer: %v", err)
	}
	if n := posts.Load(); n != 0 {
		t.Errorf("%d exports with tracing off", n)
	}
}

// TestTracingExports: with an OTLP endpoint, request and process spans reach an
// in-process OTLP/HTTP receiver at Shutdown, under the TRACEPARENT given, and Shutdown
// ends the exporter's goroutines (goleak).
func TestTracingExports(t *testing.T) {
	defer goleak.VerifyNone(t)
	clearOTel(t)
	got := make(chan *coltrace.ExportTraceServiceRequest, 8)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var m coltrace.ExportTraceServiceRequest
		if err := proto.Unmarshal(b, &m); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		got <- &m
	}))
	defer srv.Close()
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", srv.URL+"/v1/traces")
	tr, err := telemetry.StartTracing(context.Background(), "executor", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
	if err != nil || tr == nil {
		t.Fatalf("StartTracing = %v, %v", tr, err)
	}
	obs := telemetry.WithTracing(nil, tr)
	ctx, end := obs.(executor.RequestSpan).StartRequest(context.Background(), "process/start")
	endProc := obs.(process.Span).StartProcess(ctx)
	end("0")
	endProc(process.ExitError)
	obs.ProcessStarted() // the counting half is a no-op without metrics
	if err := tr.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	close(got)
	spans := map[string]string{} // name -> parent span id
	ids := map[string]string{}
	for m := range got {
		for _, rs := range m.ResourceSpans {
			for _, ss := range rs.ScopeSpans {
				for _, s := range ss.Spans {
					if tid := string(s.TraceId); tid != string(mustHex(t, "4bf92f3577b34da6a3ce929d0e0e4736")) {
						t.Errorf("span %s trace id %x", s.Name, s.TraceId)
					}
					spans[s.Name] = string(s.ParentSpanId)
					ids[s.Name] = string(s.SpanId)
				}
			}
		}
	}
	if len(spans) != 2 || spans["process/start"] != string(mustHex(t, "00f067aa0ba902b7")) || spans["process"] != ids["process/start"] {
		t.Errorf("spans (name -> parent) %q, want process/start under the TRACEPARENT and process under it", spans)
	}
}

func mustHex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// BenchmarkRequestSpan is the tracing cost per JSON-RPC request when tracing is on (span
// start and end, batched to an in-process OTLP/HTTP receiver). Off, the hook is not
// installed: zero.
func BenchmarkRequestSpan(b *testing.B) {
	for _, k := range otelVars {
		b.Setenv(k, "")
	}
	srv := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) { _, _ = io.Copy(io.Discard, r.Body) }))
	defer srv.Close()
	b.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", srv.URL+"/v1/traces")
	tr, err := telemetry.StartTracing(context.Background(), "bench", "")
	if err != nil || tr == nil {
		b.Fatalf("StartTracing: %v, %v", tr, err)
	}
	defer func() { _ = tr.Shutdown(context.Background()) }()
	rs := telemetry.WithTracing(nil, tr).(executor.RequestSpan)
	b.ReportAllocs()
	for b.Loop() {
		_, end := rs.StartRequest(context.Background(), "process/read")
		end("0")
	}
}
