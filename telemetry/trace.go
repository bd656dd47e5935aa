package telemetry

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/execlab/executor/executor"
	"github.com/execlab/executor/executor/process"
	"github.com/execlab/executor/registry/api"
	"github.com/execlab/executor/registry/rendezvous"
)

// ErrTraceConfig reports OTEL_* settings this build does not support (an exporter other
// than otlp or none, a protocol other than http/protobuf).
var ErrTraceConfig = errors.New("unsupported OpenTelemetry configuration")

// Tracing is the OpenTelemetry tracer of one process: spans for JSON-RPC requests
// (executor.RequestSpan) and process lifetimes (process.Span), exported over OTLP/HTTP.
// A nil *Tracing is off: its methods are never reached (WithTracing returns the observer
// unchanged) and Shutdown is a no-op.
type Tracing struct {
	provider *sdktrace.TracerProvider
	tracer   trace.Tracer
	parent   trace.SpanContext // the process's TRACEPARENT, if valid; the root spans' remote parent
	// requestOpts are the start options of each method label's request span (kind and
	// attributes), built once by StartTracing and read-only after: the per-request path
	// builds no option or attribute slice of its own.
	requestOpts map[string][]trace.SpanStartOption
	// processOpts are the process span's start options.
	processOpts []trace.SpanStartOption
	// ender ends the process spans on its own goroutine (trace_process.go); stopped by
	// Shutdown before the provider.
	ender processEnder
}

// requestSpanOpts are a request span's start options for method.
func requestSpanOpts(method string) []trace.SpanStartOption {
	return []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindServer),
		trace.WithAttributes(attribute.String("rpc.system", "jsonrpc"), attribute.String("rpc.method", method))}
}

// TracingEnabled reports whether getenv's OTEL_* variables turn tracing on: an OTLP
// endpoint (OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) or
// OTEL_TRACES_EXPORTER=otlp, and neither OTEL_SDK_DISABLED=true nor
// OTEL_TRACES_EXPORTER=none. It returns ErrTraceConfig for settings not supported.
func TracingEnabled(getenv func(string) string) (bool, error) {
	if strings.EqualFold(strings.TrimSpace(getenv("OTEL_SDK_DISABLED")), "true") {
		return false, nil
	}
	exp := strings.ToLower(strings.TrimSpace(getenv("OTEL_TRACES_EXPORTER")))
	switch exp {
	case "none":
		return false, nil
	case "", "otlp":
	default:
		return false, fmt.Errorf("%w: OTEL_TRACES_EXPORTER=%q (only otlp or none)", ErrTraceConfig, exp)
	}
	for _, name := range []string{"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"} {
		if p := strings.TrimSpace(getenv(name)); p != "" {
			if p != "http/protobuf" {
				return false, fmt.Errorf("%w: %s=%q (only http/protobuf)", ErrTraceConfig, name, p)
			}
			break // the signal-specific one wins
		}
	}
	return exp == "otlp" || getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != "", nil
}

// StartTracing builds the process's tracer from the OTEL_* environment (TracingEnabled;
// the exporter reads the OTEL_EXPORTER_OTLP_* variables itself: endpoint, headers,
// timeout, compression). service is the default service.name, overridden by
// OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES. traceparent is the process's
// TRACEPARENT: when valid, spans without a parent become its children. It returns nil
// (off: no exporter, no goroutine) when the environment does not enable tracing.
func StartTracing(ctx context.Context, service, traceparent string) (*Tracing, error) {
	on, err := TracingEnabled(os.Getenv)
	if err != nil || !on {
		return nil, err
	}
	exp, err := newOTLPExporter(os.Getenv)
	if err != nil {
		return nil, fmt.Errorf("creating the OTLP/HTTP trace exporter: %w", err)
	}
	res, err := resource.New(ctx, resource.WithAttributes(attribute.String("service.name", service)), resource.WithFromEnv())
	if err != nil {
		_ = exp.Shutdown(ctx)
		return nil, fmt.Errorf("building the trace resource: %w", err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	t := &Tracing{provider: tp, tracer: tp.Tracer("github.com/execlab/executor"),
		requestOpts: map[string][]trace.SpanStartOption{},
		processOpts: []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindInternal)}}
	for _, m := range append(executor.Methods(), "other") {
		t.requestOpts[m] = requestSpanOpts(m)
	}
	t.ender.start()
	if traceparent != "" {
		carrier := propagation.MapCarrier{"traceparent": traceparent}
		t.parent = trace.SpanContextFromContext(propagation.TraceContext{}.Extract(context.Background(), carrier))
	}
	return t, nil
}

// Shutdown flushes the spans still queued and stops the exporter (its goroutines end).
func (t *Tracing) Shutdown(ctx context.Context) error {
	if t == nil {
		return nil
	}
	t.ender.stop() // the spans it still holds are ended, then flushed below
	if err := t.provider.Shutdown(ctx); err != nil {
		return fmt.Errorf("shutting the tracer down: %w", err)
	}
	return nil
}

// start begins a span under ctx's span, or else under the process's TRACEPARENT.
func (t *Tracing) start(ctx context.Context, name string, kind trace.SpanKind, attrs ...attribute.KeyValue) (context.Context, trace.Span) {
	if !trace.SpanContextFromContext(ctx).IsValid() && t.parent.IsValid() {
		ctx = trace.ContextWithRemoteSpanContext(ctx, t.parent)
	}
	return t.tracer.Start(ctx, name, trace.WithSpanKind(kind), trace.WithAttributes(attrs...))
}

// startWith begins a span with prepared options under ctx's span, or else under the
// process's TRACEPARENT.
func (t *Tracing) startWith(ctx context.Context, name string, opts []trace.SpanStartOption) (context.Context, trace.Span) {
	if !trace.SpanContextFromContext(ctx).IsValid() && t.parent.IsValid() {
		ctx = trace.ContextWithRemoteSpanContext(ctx, t.parent)
	}
	return t.tracer.Start(ctx, name, opts...)
}

// StartRequest implements executor.RequestSpan: one server span per JSON-RPC request,
// named after the method label (bounded); an error result adds its code
// (rpc.jsonrpc.error_code, which the semantic conventions set on errors only) and an error
// status. Its start options are prepared per method (requestOpts).
func (t *Tracing) StartRequest(ctx context.Context, method string) (context.Context, func(code string)) {
	opts, ok := t.requestOpts[method]
	if !ok { // not a label the executor passes; built per call
		opts = requestSpanOpts(method)
	}
	ctx, span := t.startWith(ctx, method, opts)
	return ctx, func(code string) {
		if code != "0" {
			span.SetAttributes(attribute.String("rpc.jsonrpc.error_code", code))
			span.SetStatus(codes.Error, "JSON-RPC error "+code)
		}
		span.End()
	}
}

// WithTracing returns obs with t's spans added (executor.RequestSpan and process.Span):
// obs itself when t is nil; a nil obs (metrics off) counts nothing.
func WithTracing(obs executor.Observer, t *Tracing) executor.Observer {
	if t == nil {
		return obs
	}
	if obs == nil {
		obs = nopExecutor{}
	}
	return tracedObserver{Observer: obs, Tracing: t}
}

type tracedObserver struct {
	executor.Observer
	*Tracing
}

var (
	_ executor.RequestSpan = tracedObserver{}
	_ process.Span         = tracedObserver{}
)

// nopExecutor is the counting half of a traced observer when metrics are off.
type nopExecutor struct{}

func (nopExecutor) Backpressure(string, time.Duration)           {}
func (nopExecutor) ProcessStarted()                              {}
func (nopExecutor) ProcessExited(process.ExitClass)              {}
func (nopExecutor) OutputBytes(int)                              {}
func (nopExecutor) RequestHandled(string, string, time.Duration) {}
func (nopExecutor) ConnOpened()                                  {}
func (nopExecutor) ConnClosed()                                  {}

// HarnessConnect implements harness.RemoteOptions.Trace: a client span per physical
// connection attempt ("harness connect": registry connect, rendezvous upgrade, Noise
// handshake), whose context is returned as the traceparent the harness sends on the
// connect request and the upgrade.
func (t *Tracing) HarnessConnect(ctx context.Context) (string, func(error)) {
	ctx, span := t.start(ctx, "harness connect", trace.SpanKindClient)
	carrier := propagation.MapCarrier{}
	propagation.TraceContext{}.Inject(ctx, carrier)
	return carrier["traceparent"], func(err error) {
		if err != nil {
			span.SetStatus(codes.Error, "connect failed")
		}
		span.End()
	}
}

// Middleware traces the registry's API endpoints and the rendezvous upgrades: one server
// span per request, named from a closed set ("registry register", "registry connect",
// "registry validate", "rendezvous upgrade"), a child of the request's W3C traceparent
// header when it has one. Other paths pass through untraced. The ResponseWriter is passed
// on unwrapped (the upgrade hijacks it); the span ends when the handler returns, which for
// an upgrade is once the socket is accepted or refused.
func (t *Tracing) Middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		name, attrs := spanName(req.URL.Path)
		if name == "" {
			next.ServeHTTP(w, req)
			return
		}
		ctx := propagation.TraceContext{}.Extract(req.Context(), propagation.HeaderCarrier(req.Header))
		ctx, span := t.tracer.Start(ctx, name, trace.WithSpanKind(trace.SpanKindServer), trace.WithAttributes(attrs...))
		defer span.End()
		next.ServeHTTP(w, req.WithContext(ctx))
	})
}

// spanName is the span of a registry path: "" for paths not traced.
func spanName(path string) (string, []attribute.KeyValue) {
	if rest, ok := strings.CutPrefix(path, rendezvous.BasePath); ok {
		role, _, _ := strings.Cut(rest, "/")
		if role != "executor" && role != "harness" {
			role = "other"
		}
		return "rendezvous upgrade", []attribute.KeyValue{attribute.String("rendezvous.role", role)}
	}
	if _, suffix, ok := api.SplitPath(path); ok && knownEndpoint(suffix) {
		return "registry " + strings.TrimPrefix(suffix, "/"), nil
	}
	return "", nil
}

// StartHandshake traces one harness stream at the executor ("noise handshake": Noise
// responder plus registry validation): a child of traceparent, the cleartext relay frame
// field 11 the harness put on its handshake frame, when it parses as W3C; otherwise of the
// process's TRACEPARENT. The returned ctx carries the span, so the stream's JSON-RPC
// request spans become its children.
func (t *Tracing) StartHandshake(ctx context.Context, traceparent string) (context.Context, func(outcome string)) {
	if traceparent != "" {
		ctx = propagation.TraceContext{}.Extract(ctx, propagation.MapCarrier{"traceparent": traceparent})
	}
	ctx, span := t.start(ctx, "noise handshake", trace.SpanKindServer)
	return ctx, func(outcome string) {
		span.SetAttributes(attribute.String("noise.outcome", outcome))
		if outcome != "ok" {
			span.SetStatus(codes.Error, outcome)
		}
		span.End()
	}
}

// SpanTraceparent returns the W3C traceparent of ctx's current span, "" when ctx has no
// valid span or t is nil (tracing off).
func (t *Tracing) SpanTraceparent(ctx context.Context) string {
	if t == nil || !trace.SpanContextFromContext(ctx).IsValid() {
		return ""
	}
	carrier := propagation.MapCarrier{}
	propagation.TraceContext{}.Inject(ctx, carrier)
	return carrier["traceparent"]
}
