package telemetry

import (
	"compress/gzip"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

func envOf(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestOTLPConfig(t *testing.T) {
	e, err := newOTLPExporter(envOf(map[string]string{
		"OTEL_EXPORTER_OTLP_ENDPOINT":           "http://collector:4318/",
		"OTEL_EXPORTER_OTLP_HEADERS":            "a=1,b=x%20y",
		"OTEL_EXPORTER_OTLP_TRACES_HEADERS":     "api-key=s%3Dcret , x-tenant=t1",
		"OTEL_EXPORTER_OTLP_TIMEOUT":            "2500",
		"OTEL_EXPORTER_OTLP_TRACES_COMPRESSION": "gzip",
	}))
	if err != nil {
		t.Fatal(err)
	}
	if e.url != "http://collector:4318/v1/traces" || e.timeout != 2500*time.Millisecond || !e.gzip {
		t.Errorf("url %q timeout %v gzip %v", e.url, e.timeout, e.gzip)
	}
	if len(e.headers) != 2 || e.headers["api-key"] != "s=cret" || e.headers["x-tenant"] != "t1" {
		t.Errorf("headers %q: want the signal-specific list, URL-decoded", e.headers)
	}
	e, err = newOTLPExporter(envOf(map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://a:1", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "https://b:2/custom"}))
	if err != nil || e.url != "https://b:2/custom" || e.timeout != 10*time.Second || e.gzip {
		t.Errorf("signal endpoint: %v, %+v", err, e)
	}
	if e, err := newOTLPExporter(envOf(nil)); err != nil || e.url != "http://localhost:4318/v1/traces" {
		t.Errorf("default: %v, %+v", err, e)
	}
	for _, bad := range []map[string]string{
		{"OTEL_EXPORTER_OTLP_TIMEOUT": "10s"},
		{"OTEL_EXPORTER_OTLP_COMPRESSION": "zstd"},
		{"OTEL_EXPORTER_OTLP_HEADERS": "novalue"},
		{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "not a url"},
	} {
		if _, err := newOTLPExporter(envOf(bad)); !errors.Is(err, ErrTraceConfig) {
			t.Errorf("%v: err %v, want ErrTraceConfig", bad, err)
		}
	}
	if _, err := newOTLPExporter(envOf(map[string]string{"OTEL_EXPORTER_OTLP_CERTIFICATE": "/nonexistent/ca.pem"})); err == nil {
		t.Error("a missing certificate file was accepted")
	}
}

// TestOTLPExport posts two resources' spans (gzip, headers) to a collector that answers
// 503 once: the request is retried, decodes as an ExportTraceServiceRequest and carries
// every span field the executor sets.
func TestOTLPExport(t *testing.T) {
	var calls atomic.Int32
	got := make(chan *coltrace.ExportTraceServiceRequest, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		if r.Header.Get("Content-Type") != "application/x-protobuf" || r.Header.Get("Content-Encoding") != "gzip" || r.Header.Get("Api-Key") != "k" {
			t.Errorf("headers %v", r.Header)
		}
		zr, err := gzip.NewReader(r.Body)
		if err != nil {
			t.Error(err)
			return
		}
		b, _ := io.ReadAll(zr)
		var m coltrace.ExportTraceServiceRequest
		if err := proto.Unmarshal(b, &m); err != nil {
			t.Error(err)
		}
		got <- &m
	}))
	defer srv.Close()
	e, err := newOTLPExporter(envOf(map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": srv.URL + "/v1/traces",
		"OTEL_EXPORTER_OTLP_HEADERS": "api-key=k", "OTEL_EXPORTER_OTLP_COMPRESSION": "gzip"}))
	if err != nil {
		t.Fatal(err)
	}
	defer e.Shutdown(context.Background())
	tid := trace.TraceID{1, 2, 3}
	parent := trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: trace.SpanID{9}, Remote: true})
	start := time.Unix(100, 5)
	resA := resource.NewSchemaless(attribute.String("service.name", "a"))
	resB := resource.NewSchemaless(attribute.String("service.name", "b"))
	stubs := tracetest.SpanStubs{
		{Name: "process/start", SpanKind: trace.SpanKindServer, Parent: parent, Resource: resA,
			SpanContext: trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: trace.SpanID{1}, TraceFlags: trace.FlagsSampled}),
			StartTime:   start, EndTime: start.Add(time.Millisecond),
			Attributes: []attribute.KeyValue{attribute.String("rpc.method", "process/start"), attribute.Int64("n", -3),
				attribute.Bool("b", true), attribute.Float64("f", 1.5), attribute.StringSlice("ss", []string{"x", "y"})},
			Status:               sdktrace.Status{Code: codes.Error, Description: "JSON-RPC error -32600"},
			Events:               []sdktrace.Event{{Name: "ev", Time: start}},
			InstrumentationScope: instrumentation.Scope{Name: "github.com/execlab/executor"}},
		{Name: "process", SpanKind: trace.SpanKindInternal, Resource: resA,
			SpanContext:          trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: trace.SpanID{2}}),
			InstrumentationScope: instrumentation.Scope{Name: "github.com/execlab/executor"}},
		{Name: "registry connect", SpanKind: trace.SpanKindServer, Resource: resB,
			SpanContext:          trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: trace.SpanID{3}}),
			InstrumentationScope: instrumentation.Scope{Name: "other"}},
	}
	if err := e.ExportSpans(context.Background(), stubs.Snapshots()); err != nil {
		t.Fatal(err)
	}
	m := <-got
	if calls.Load() != 2 {
		t.Errorf("%d requests, want 2 (one 503, one retry)", calls.Load())
	}
	if len(m.ResourceSpans) != 2 || len(m.ResourceSpans[0].ScopeSpans) != 1 || len(m.ResourceSpans[0].ScopeSpans[0].Spans) != 2 {
		t.Fatalf("grouping: %v", m)
	}
	if rs := m.ResourceSpans[1]; rs.Resource.Attributes[0].Value.GetStringValue() != "b" || rs.ScopeSpans[0].Scope.Name != "other" {
		t.Errorf("second resource %v", rs)
	}
	s := m.ResourceSpans[0].ScopeSpans[0].Spans[0]
	want := &tracepb.Span{Name: "process/start", Kind: tracepb.Span_SPAN_KIND_SERVER,
		TraceId: tid[:], SpanId: []byte{1, 0, 0, 0, 0, 0, 0, 0}, ParentSpanId: []byte{9, 0, 0, 0, 0, 0, 0, 0},
		Flags:             0x301, // sampled, has-is-remote, parent remote
		StartTimeUnixNano: uint64(start.UnixNano()), EndTimeUnixNano: uint64(start.Add(time.Millisecond).UnixNano()),
		Attributes: keyValues([]attribute.KeyValue{attribute.String("rpc.method", "process/start"), attribute.Int64("n", -3),
			attribute.Bool("b", true), attribute.Float64("f", 1.5), attribute.StringSlice("ss", []string{"x", "y"})}),
		Status: &tracepb.Status{Code: tracepb.Status_STATUS_CODE_ERROR, Message: "JSON-RPC error -32600"},
		Events: []*tracepb.Span_Event{{Name: "ev", TimeUnixNano: uint64(start.UnixNano())}}}
	if !proto.Equal(s, want) {
		t.Errorf("span\n got %v\nwant %v", s, want)
	}
	if ss := s.Attributes[4].Value.GetArrayValue().GetValues(); len(ss) != 2 || ss[1].GetStringValue() != "y" {
		t.Errorf("string slice attribute %v", s.Attributes[4])
	}
	if p := m.ResourceSpans[0].ScopeSpans[0].Spans[1]; p.ParentSpanId != nil || p.Flags != 0x100 || p.Status != nil {
		t.Errorf("root span %v", p)
	}
}

// TestOTLPExportGivesUp: a collector answering 400 is not retried; 503 is retried only
// within the timeout.
func TestOTLPExportGivesUp(t *testing.T) {
	var calls atomic.Int32
	status := http.StatusBadRequest
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		calls.Add(1)
		w.WriteHeader(status)
	}))
	defer srv.Close()
	e, err := newOTLPExporter(envOf(map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": srv.URL, "OTEL_EXPORTER_OTLP_TIMEOUT": "800"}))
	if err != nil {
		t.Fatal(err)
	}
	defer e.Shutdown(context.Background())
	spans := tracetest.SpanStubs{{Name: "x"}}.Snapshots()
	if err := e.ExportSpans(context.Background(), spans); err == nil || calls.Load() != 1 {
		t.Errorf("400: err %v after %d requests, want an error after 1", err, calls.Load())
	}
	status = http.StatusServiceUnavailable
	calls.Store(0)
	if err := e.ExportSpans(context.Background(), spans); !errors.Is(err, context.DeadlineExceeded) || calls.Load() < 2 {
		t.Errorf("503: err %v after %d requests, want the deadline after a retry (0.5 s pause, 0.8 s timeout)", err, calls.Load())
	}
	_ = e.Shutdown(context.Background())
	before := calls.Load()
	if err := e.ExportSpans(context.Background(), spans); err != nil || calls.Load() != before {
		t.Errorf("after Shutdown: err %v, %d requests more", err, calls.Load()-before)
	}
}
