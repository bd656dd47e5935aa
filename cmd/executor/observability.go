package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/execlab/executor/cmd/executor/internal/remote"
	"github.com/execlab/executor/executor"
	"github.com/execlab/executor/telemetry"
)

// logFormatFlag registers --log-format (env EXECUTOR_LOG_FORMAT): text (default) or json.
func logFormatFlag(fs *flag.FlagSet) *string {
	return fs.String("log-format", envOr("EXECUTOR_LOG_FORMAT", "text"),
		"log format on stderr: text or json (one JSON object per line) [EXECUTOR_LOG_FORMAT]")
}

// newLogger builds the process logger on w: text or JSON, quiet (warn) by default.
func newLogger(w io.Writer, level, format string) (*slog.Logger, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(strings.ToUpper(level))); err != nil {
		return nil, fmt.Errorf("%w: invalid log level %q (debug, info, warn, error)", errUsage, level)
	}
	opts := &slog.HandlerOptions{Level: l}
	switch strings.ToLower(format) {
	case "", "text":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	}
	return nil, fmt.Errorf("%w: invalid log format %q (text, json)", errUsage, format)
}

// metricsFlag registers --metrics-listen (env EXECUTOR_METRICS_LISTEN): off when empty.
func metricsFlag(fs *flag.FlagSet) *string {
	return fs.String("metrics-listen", envOr("EXECUTOR_METRICS_LISTEN", ""),
		"serve Prometheus metrics on GET /metrics at HOST:PORT (':PORT' = 127.0.0.1:PORT); off when empty; never the JSON-RPC listener [EXECUTOR_METRICS_LISTEN]")
}

// startMetrics starts the metrics listener when addr is set, after register has added the
// command's metrics to its registry (the Go runtime and process collectors are always
// there). The returned stop closes it; it is a no-op when addr is empty.
func startMetrics(addr string, log *slog.Logger, register func(reg prometheus.Registerer)) (stop func(), err error) {
	if addr == "" {
		return func() {}, nil
	}
	reg := telemetry.NewRegistry()
	register(reg)
	srv, err := telemetry.Start(addr, reg, log)
	if err != nil {
		return nil, err
	}
	return func() {
		if err := srv.Close(); err != nil {
			log.Warn("closing the metrics listener", "error", err)
		}
	}, nil
}

// executorObserver is tm as an executor.Observer: nil (no observer) when metrics are off.
func executorObserver(tm *telemetry.Executor) executor.Observer {
	if tm == nil {
		return nil
	}
	return tm
}

// remoteObserver is tm as the remote loop's Observer: nil when metrics are off.
func remoteObserver(tm *telemetry.Executor) remote.Observer {
	if tm == nil {
		return nil
	}
	return tm
}

// trackSessions makes tm report srv's sessions and queue depths; a no-op when metrics are
// off.
func trackSessions(tm *telemetry.Executor, srv *executor.Server) {
	if tm != nil {
		tm.TrackSessions(srv.SessionCount)
		tm.TrackQueues(srv.QueueStats)
	}
}

// startTracing starts OpenTelemetry tracing when the standard OTEL_* variables enable it
// (telemetry.TracingEnabled; off when unset: nil, no exporter). Spans without a parent
// join the process's TRACEPARENT. The returned stop flushes and stops the exporter,
// waiting at most tracingFlush.
func startTracing(ctx context.Context, service string, log *slog.Logger) (*telemetry.Tracing, func(), error) {
	tr, err := telemetry.StartTracing(ctx, service, os.Getenv("TRACEPARENT"))
	if errors.Is(err, telemetry.ErrTraceConfig) {
		return nil, nil, fmt.Errorf("%w: %w", errUsage, err)
	}
	if err != nil {
		return nil, nil, err
	}
	return tr, func() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), tracingFlush)
		defer cancel()
		if err := tr.Shutdown(ctx); err != nil {
			log.Warn("flushing traces", "error", err)
		}
	}, nil
}

// tracingFlush bounds the final span export at exit.
const tracingFlush = 5 * time.Second

// handshakeTracer is tr as the remote loop's HandshakeTracer: nil when tracing is off.
func handshakeTracer(tr *telemetry.Tracing) remote.HandshakeTracer {
	if tr == nil {
		return nil
	}
	return tr
}

// spanTraceparent is tr's SpanTraceparent: nil when tracing is off.
func spanTraceparent(tr *telemetry.Tracing) func(context.Context) string {
	if tr == nil {
		return nil
	}
	return tr.SpanTraceparent
}
