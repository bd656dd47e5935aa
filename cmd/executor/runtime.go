package main

import (
	"context"
	"flag"
	"io"
	"log/slog"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/execlab/executor/cmd/executor/internal/serve"
	"github.com/execlab/executor/executor"
	"github.com/execlab/executor/executor/process"
	"github.com/execlab/executor/executor/tunnel"
	"github.com/execlab/executor/internal/wsauth"
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

// executorFlags are the flags `serve` and `remote` both turn into a running executor
// once their own checks have passed.
type executorFlags struct {
	sandboxBackend                   *string
	pathDirs                         *pathDirsFlag
	tunnelAllow                      func() (dial, listen *tunnel.Policy, err error)
	logLevel, logFormat, metricsAddr *string
}

// addExecutorFlags defines them on fs; logLevelHelp is the command's help text for
// --log-level.
func addExecutorFlags(fs *flag.FlagSet, logLevelHelp string) *executorFlags {
	return &executorFlags{
		logLevel:       fs.String("log-level", envOr("EXECUTOR_LOG_LEVEL", "warn"), logLevelHelp),
		logFormat:      logFormatFlag(fs),
		metricsAddr:    metricsFlag(fs),
		sandboxBackend: sandboxBackendFlag(fs),
		pathDirs:       addPathDirsFlag(fs),
		tunnelAllow:    tunnelAllowFlag(fs),
	}
}

// start checks the sandbox backend, the PATH directories and the tunnel policies (in
// that order), starts the runtime and sets the soft memory limit for maxUnackedTotal
// (already defaulted by the caller). It returns the runtime (the caller closes it after
// its server has returned) and the executor.Options these flags and the runtime decide;
// the caller adds its own.
func (f *executorFlags) start(ctx context.Context, stderr io.Writer, maxUnackedTotal int) (*executorRuntime, executor.Options, error) {
	if err := checkSandboxBackend(*f.sandboxBackend); err != nil {
		return nil, executor.Options{}, err
	}
	pathDirs, err := f.pathDirs.check()
	if err != nil {
		return nil, executor.Options{}, err
	}
	tunnelPolicy, tunnelListenPolicy, err := f.tunnelAllow()
	if err != nil {
		return nil, executor.Options{}, err
	}
	rt, err := startExecutorRuntime(ctx, stderr, *f.logLevel, *f.logFormat, *f.metricsAddr)
	if err != nil {
		return nil, executor.Options{}, err
	}
	setMemoryLimit(maxUnackedTotal, rt.log)
	return rt, executor.Options{
		ProcessGuard:         rt.guard,
		CodexHome:            codexHomeDir(),
		MaxUnackedTotalBytes: maxUnackedTotal,
		PrependPathDirs:      pathDirs,
		Observer:             telemetry.WithTracing(executorObserver(rt.tm), rt.tr),
		TunnelPolicy:         tunnelPolicy,
		TunnelListenPolicy:   tunnelListenPolicy,
	}, nil
}

// listenWithAuth parses a --listen value and loads the WebSocket authorization, in the
// reference's order: the address, then stdio with auth (refused), then the token or
// secret file.
func listenWithAuth(listen string, settings wsauth.Settings) (serve.Listen, *wsauth.Policy, error) {
	l, err := serve.ParseListen(listen)
	if err != nil {
		return l, nil, err
	}
	if l.Stdio && settings.Mode != wsauth.ModeNone {
		return l, nil, serve.ErrAuthWithStdio
	}
	auth, err := wsauth.Load(settings)
	return l, auth, err
}
