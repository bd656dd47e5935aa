package main

import (
	"context"
	"io"
	"log/slog"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/execlab/executor/executor/process"
	"github.com/execlab/executor/telemetry"
)

// executorRuntime is what `serve` and `remote` set up before their server runs: the
// logger, the process guard, the metrics listener and tracing. Its creator calls close
// after the server has returned (so the guard outlives every session's process group).
type executorRuntime struct {
	log   *slog.Logger
	guard *process.Guard      // nil when it could not start (see startProcessGuard)
	tm    *telemetry.Executor // nil without --metrics-listen
	tr    *telemetry.Tracing  // disabled without OTEL_* configuration
	stops []func()            // undone in reverse order by close
}

// startExecutorRuntime builds the logger from --log-level/--log-format, starts the process
// guard, the metrics listener (when metricsAddr is set) and tracing (OTEL_*). On error,
// what was started is stopped again.
func startExecutorRuntime(ctx context.Context, stderr io.Writer, level, format, metricsAddr string) (_ *executorRuntime, err error) {
	log, err := newLogger(stderr, level, format)
	if err != nil {
		return nil, err
	}
	rt := &executorRuntime{log: log, guard: startProcessGuard(log)}
	rt.stops = append(rt.stops, func() { _ = rt.guard.Close() })
	defer func() {
		if err != nil {
			rt.close()
		}
	}()
	stopMetrics, err := startMetrics(metricsAddr, log, func(reg prometheus.Registerer) { rt.tm = telemetry.NewExecutor(reg) })
	if err != nil {
		return nil, err
	}
	rt.stops = append(rt.stops, stopMetrics)
	tr, stopTracing, err := startTracing(ctx, "executor", log)
	if err != nil {
		return nil, err
	}
	rt.tr = tr
	rt.stops = append(rt.stops, stopTracing)
	return rt, nil
}

// close stops tracing, then metrics, then the process guard.
func (rt *executorRuntime) close() {
	for i := len(rt.stops) - 1; i >= 0; i-- {
		rt.stops[i]()
	}
	rt.stops = nil
}
