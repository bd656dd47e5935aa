// Package telemetry turns the project's observer hooks into Prometheus metrics and serves
// them on an opt-in listener (--metrics-listen on serve, remote and registry serve).
//
// Layers: this package is used only by cmd/executor (and test/observability). It sits at
// the top of the tree, beside cmd/, not under internal/: it imports the layers it
// observes, and internal/ holds leaves only (test/deps_test.go). Below it, the packages that emit
// events (executor, executor/jsonrpc, executor/process, relay/mux, the remote loop in
// cmd/executor/internal/remote, registry/rendezvous) import no metrics library: each
// defines a small Observer interface (their metrics.go) or exposes counters (the Hub's
// Stats), and *Executor and *Registry here implement or read them. Nothing here knows the
// wire.
//
// Metric names and labels are listed in docs/observability.md. Every label value is drawn
// from a closed set (method names of the table or "other", JSON-RPC error codes of the
// code table, exit classes, drop reasons, endpoint names, HTTP status codes): no process,
// stream, session, registration or environment id and no token ever becomes a label, so
// the number of series does not grow with traffic (TestCardinality).
//
// Listener: Start binds the address given (a bare ":PORT" binds 127.0.0.1, loopback by
// default as every local listener of the project), serves /metrics only, and is closed by
// Server.Close, which waits for its goroutine. It is never the JSON-RPC listener.
//
// Traces: StartTracing builds an OpenTelemetry tracer provider with an OTLP/HTTP exporter
// from the standard OTEL_* environment only (TracingEnabled); it returns nil, and nothing
// runs, when the environment does not turn tracing on. Tracing implements the span hooks
// executor.RequestSpan and process.Span; WithTracing adds them to an executor.Observer.
// Shutdown flushes and stops the exporter's goroutines. No trace context ever goes inside
// the encrypted relay stream. The OTLP/HTTP exporter is our own (otlp.go: the SDK's
// spans to OTLP protobuf, one POST per batch): the upstream otlptracehttp links gRPC and
// grpc-gateway, whose package inits cost every executor process ~3.5 MiB of RSS with
// tracing off (rss_idle, docs/bench.md; test/observability TestInitHeap keeps them out).
//
// Concurrency: every method of Executor and Registry is safe for concurrent use; the
// observer methods are a few atomic operations each (prometheus counters, gauges and
// histograms).
package telemetry
