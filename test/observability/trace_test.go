//go:build linux

package observability_test

import (
	"context"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracev1 "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/execlab/executor/harness"
	"github.com/execlab/executor/telemetry"
)

// otlpReceiver is an in-process OTLP/HTTP trace receiver: it decodes each
// ExportTraceServiceRequest posted to /v1/traces and keeps its spans.
type otlpReceiver struct {
	srv      *httptest.Server
	mu       sync.Mutex
	spans    []*tracev1.Span
	svcOf    map[*tracev1.Span]string // span -> its resource's service.name
	services map[string]bool
}

func newOTLPReceiver(t *testing.T) *otlpReceiver {
	t.Helper()
	r := &otlpReceiver{services: map[string]bool{}, svcOf: map[*tracev1.Span]string{}}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.URL.Path != "/v1/traces" || req.Header.Get("Content-Type") != "application/x-protobuf" {
			http.Error(w, "want POST /v1/traces application/x-protobuf", http.StatusBadRequest)
			return
		}
		body, err := io.ReadAll(io.LimitReader(req.Body, 16<<20))
		var msg coltrace.ExportTraceServiceRequest
		if err == nil {
			err = proto.Unmarshal(body, &msg)
		}
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		r.mu.Lock()
		for _, rs := range msg.ResourceSpans {
			svc := ""
			for _, kv := range rs.GetResource().GetAttributes() {
				if kv.Key == "service.name" {
					svc = kv.GetValue().GetStringValue()
					r.services[svc] = true
				}
			}
			for _, ss := range rs.ScopeSpans {
				r.spans = append(r.spans, ss.Spans...)
				for _, sp := range ss.Spans {
					r.svcOf[sp] = svc
				}
			}
		}
		r.mu.Unlock()
		out, _ := proto.Marshal(&coltrace.ExportTraceServiceResponse{})
		w.Header().Set("Content-Type", "application/x-protobuf")
		_, _ = w.Write(out)
	}))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *otlpReceiver) snapshot() ([]*tracev1.Span, map[string]bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	svc := map[string]bool{}
	for k := range r.services {
		svc[k] = true
	}
	return append([]*tracev1.Span(nil), r.spans...), svc
}

// TestTracesExecutor runs a real `executor serve` with the standard OTEL_* variables and a
// TRACEPARENT, drives initialize and a process through it, and checks that the in-process
// OTLP/HTTP receiver got one span per JSON-RPC request and one per process lifetime (a
// child of its process/start span), all in the TRACEPARENT's trace, exported at exit.
func TestTracesExecutor(t *testing.T) {
	rcv := newOTLPReceiver(t)
	const traceID = "4bf92f3577b34da6a3ce929d0e0e4736"
	p := startEnv(t, nil, []string{
		"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=" + rcv.srv.URL + "/v1/traces",
		"OTEL_SERVICE_NAME=executor-under-test",
		"TRACEPARENT=00-" + traceID + "-00f067aa0ba902b7-01",
	}, "serve", "--listen", "ws://127.0.0.1:0", "--log-format", "json")
	line := p.url(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := harness.DialLocal(ctx, strings.TrimSpace(line), &harness.Options{OnNotification: func(harness.Notification) {}})
	runOneProcess(ctx, t, c, err)
	// SIGTERM: the executor flushes its spans on the way out.
	if err := p.Cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(15 * time.Second)
	var spans []*tracev1.Span
	var services map[string]bool
	for time.Now().Before(deadline) { // bounded
		spans, services = rcv.snapshot()
		if hasSpan(spans, "process") {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if !services["executor-under-test"] {
		t.Errorf("service names %v, want executor-under-test (OTEL_SERVICE_NAME)", services)
	}
	byName := map[string]*tracev1.Span{}
	for _, s := range spans {
		if got := hex.EncodeToString(s.TraceId); got != traceID {
			t.Errorf("span %q in trace %s, want the TRACEPARENT's %s", s.Name, got, traceID)
		}
		byName[s.Name] = s
	}
	for _, name := range []string{"initialize", "process/start", "process/read", "process"} {
		if byName[name] == nil {
			t.Fatalf("no %q span among %d: %v", name, len(spans), names(spans))
		}
	}
	if got := hex.EncodeToString(byName["initialize"].ParentSpanId); got != "00f067aa0ba902b7" {
		t.Errorf("initialize span's parent %s, want the TRACEPARENT's span 00f067aa0ba902b7", got)
	}
	if string(byName["process"].ParentSpanId) != string(byName["process/start"].SpanId) {
		t.Errorf("the process span is not a child of its process/start span")
	}
	if byName["process/start"].Kind != tracev1.Span_SPAN_KIND_SERVER {
		t.Errorf("process/start span kind %v, want server", byName["process/start"].Kind)
	}
}

func hasSpan(spans []*tracev1.Span, name string) bool {
	for _, s := range spans {
		if s.Name == name {
			return true
		}
	}
	return false
}

func names(spans []*tracev1.Span) []string {
	var out []string
	for _, s := range spans {
		out = append(out, s.Name)
	}
	return out
}

// find returns the spans of service svc named name.
func (r *otlpReceiver) find(svc, name string) []*tracev1.Span {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []*tracev1.Span
	for _, sp := range r.spans {
		if sp.Name == name && r.svcOf[sp] == svc {
			out = append(out, sp)
		}
	}
	return out
}

// TestTracesAcrossHops runs a real registry and a real `executor remote`, both with OTEL_*
// pointing at an in-process OTLP/HTTP receiver, and an in-process harness traced by
// telemetry, which opens a stream and runs a process. One trace, the harness's,
// holds: "harness connect" (harness); its children "registry connect" and the harness's
// "rendezvous upgrade" (registry, joined by the traceparent headers) and "noise handshake"
// (executor, joined by the handshake frame's cleartext traceparent field); under the
// handshake the registry's "registry validate" (the executor's validate call carries the
// handshake span's traceparent) and the JSON-RPC spans; under process/start the process's
// lifetime.
func TestTracesAcrossHops(t *testing.T) {
	rcv := newOTLPReceiver(t)
	endpoint := rcv.srv.URL + "/v1/traces"
	t.Cleanup(func() { // runs after the stack's processes stopped (and flushed their spans)
		deadline := time.Now().Add(15 * time.Second)
		for time.Now().Before(deadline) && (len(rcv.find("registry", "rendezvous upgrade")) < 2 || len(rcv.find("executor", "process")) == 0) {
			time.Sleep(50 * time.Millisecond) // bounded
		}
		checkHarnessTrace(t, rcv)
	})
	s := startStackEnv(t, []string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=" + endpoint})

	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", endpoint)
	t.Setenv("OTEL_SERVICE_NAME", "harness")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	tr, err := telemetry.StartTracing(ctx, "harness", "")
	if err != nil || tr == nil {
		t.Fatalf("StartTracing: %v, %v", tr, err)
	}
	c, err := harness.Dial(ctx, &harness.RemoteOptions{Registry: s.registryURL, EnvironmentID: s.env, Token: s.token,
		Trace: tr.HarnessConnect, Client: &harness.Options{OnNotification: func(harness.Notification) {}}})
	runOneProcess(ctx, t, c, err)
	if err := tr.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
}

func checkHarnessTrace(t *testing.T, rcv *otlpReceiver) {
	t.Helper()
	hc := rcv.find("harness", "harness connect")
	spans, services := rcv.snapshot()
	t.Logf("%d spans from %v: %v", len(spans), services, names(spans))
	if len(hc) != 1 {
		t.Fatalf("%d harness connect spans, want 1", len(hc))
	}
	root := hc[0]
	if root.Kind != tracev1.Span_SPAN_KIND_CLIENT {
		t.Errorf("harness connect kind %v, want client", root.Kind)
	}
	child := func(name string, want func(*tracev1.Span) bool) {
		for _, sp := range rcv.find("registry", name) {
			if string(sp.TraceId) == string(root.TraceId) && string(sp.ParentSpanId) == string(root.SpanId) && want(sp) {
				return
			}
		}
		t.Errorf("no registry %q span child of the harness connect span (trace %x)", name, root.TraceId)
	}
	child("registry connect", func(*tracev1.Span) bool { return true })
	child("rendezvous upgrade", func(sp *tracev1.Span) bool {
		for _, kv := range sp.Attributes {
			if kv.Key == "rendezvous.role" && kv.GetValue().GetStringValue() == "harness" {
				return true
			}
		}
		return false
	})
	if len(rcv.find("registry", "registry validate")) == 0 {
		t.Errorf("no registry validate span among %v", names(spans))
	}
	// The executor's side, all in the harness's trace.
	one := func(name string) *tracev1.Span {
		for _, sp := range rcv.find("executor", name) {
			if string(sp.TraceId) == string(root.TraceId) {
				return sp
			}
		}
		t.Fatalf("no executor %q span in the harness's trace %x", name, root.TraceId)
		return nil
	}
	hs := one("noise handshake")
	if string(hs.ParentSpanId) != string(root.SpanId) {
		t.Errorf("noise handshake's parent %x, want harness connect %x", hs.ParentSpanId, root.SpanId)
	}
	for _, kv := range hs.Attributes {
		if kv.Key == "noise.outcome" && kv.GetValue().GetStringValue() != "ok" {
			t.Errorf("noise handshake outcome %q", kv.GetValue().GetStringValue())
		}
	}
	validated := false
	for _, sp := range rcv.find("registry", "registry validate") {
		validated = validated || string(sp.TraceId) == string(root.TraceId) && string(sp.ParentSpanId) == string(hs.SpanId)
	}
	if !validated {
		t.Errorf("no registry validate span child of the executor's noise handshake")
	}
	ps := one("process/start")
	if string(ps.ParentSpanId) != string(hs.SpanId) {
		t.Errorf("process/start's parent %x, want the noise handshake %x", ps.ParentSpanId, hs.SpanId)
	}
	if string(one("initialize").ParentSpanId) != string(hs.SpanId) {
		t.Errorf("initialize is not a child of the noise handshake")
	}
	if string(one("process").ParentSpanId) != string(ps.SpanId) {
		t.Errorf("the process span is not a child of process/start")
	}
}

// runOneProcess takes a dialed Client (dialErr its dial's error), initializes it, runs
// /bin/true to its end as process p1 and closes the Client: one span of each kind.
func runOneProcess(ctx context.Context, t *testing.T, c *harness.Client, dialErr error) {
	t.Helper()
	if dialErr != nil {
		t.Fatal(dialErr)
	}
	defer c.Close()
	if _, err := c.Initialize(ctx, "trace-test", ""); err != nil {
		t.Fatal(err)
	}
	runProcess(ctx, t, c, "p1", "/bin/true")
}
