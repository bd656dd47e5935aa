package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/execlab/executor/cmd/executor/internal/serve"
	"github.com/execlab/executor/executor"
	"github.com/execlab/executor/executor/process"
	"github.com/execlab/executor/internal/wsauth"
	"github.com/execlab/executor/telemetry"
)

func runServe(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("executor serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	listen := fs.String("listen", envOr("EXECUTOR_LISTEN", "ws://127.0.0.1:0"),
		"where to serve: ws://IP:PORT (an IP literal; port 0 picks a free port), stdio or stdio:// (env EXECUTOR_LISTEN)")
	concurrent := fs.Int("concurrent-requests", 1,
		"requests handled at once per connection; 1 = strictly serial, N>=2 = control and ordinary lanes of N each")
	ttl := fs.Duration("session-ttl", 0, "how long a disconnected session keeps its processes before they are killed (default 30s)")
	maxBytes := fs.Int("max-retained-bytes", 0, "output bytes kept per process for process/read (default 1 MiB)")
	maxChunks := fs.Int("max-retained-chunks", 0, "output chunks kept per process for process/read (default 50000)")
	maxUnackedTotal := fs.Int("max-unacked-total-bytes", envInt("EXECUTOR_MAX_UNACKED_TOTAL_BYTES", 0),
		"output bytes kept until acknowledged by all processes started with outputAck (by our harness) of all sessions together, beyond 1 MiB each; past it they block on their output until acknowledgements free room; also sets the soft memory limit (this + 40 MiB) unless GOMEMLIMIT is set (default 64 MiB) (env EXECUTOR_MAX_UNACKED_TOTAL_BYTES)")
	logLevel := fs.String("log-level", envOr("EXECUTOR_LOG_LEVEL", "warn"), "log level on stderr: debug, info, warn, error (env EXECUTOR_LOG_LEVEL)")
	logFormat := logFormatFlag(fs)
	metricsAddr := metricsFlag(fs)
	sandboxBackend := sandboxBackendFlag(fs)
	pathDirsF := addPathDirsFlag(fs)
	wsAuth := wsAuthFlags(fs)
	proxy := addProxyFlags(fs)
	tunnelAllow := tunnelAllowFlag(fs)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return &errExitCode{code: 2} // a usage error, as clap's (the flag package printed it)
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%w: unexpected argument %q", errUsage, fs.Arg(0))
	}
	// The reference's order: the --ws-* combination, then --listen, then stdio vs auth,
	// then the token or secret file (before binding).
	authSettings, err := wsAuth().Settings()
	if err != nil {
		return err
	}
	l, err := serve.ParseListen(*listen)
	if err != nil {
		return err
	}
	if l.Stdio && authSettings.Mode != wsauth.ModeNone {
		return serve.ErrAuthWithStdio
	}
	auth, err := wsauth.Load(authSettings)
	if err != nil {
		return err
	}
	if *concurrent < 1 {
		return fmt.Errorf("%w: --concurrent-requests must be at least 1", errUsage)
	}
	if *maxUnackedTotal < 0 {
		return fmt.Errorf("%w: --max-unacked-total-bytes must be positive", errUsage)
	}
	if *maxUnackedTotal == 0 {
		*maxUnackedTotal = process.DefaultMaxUnackedTotalBytes
	}
	if err := checkSandboxBackend(*sandboxBackend); err != nil {
		return err
	}
	pathDirs, err := pathDirsF.check()
	if err != nil {
		return err
	}
	tunnelPolicy, tunnelListenPolicy, err := tunnelAllow()
	if err != nil {
		return err
	}
	rt, err := startExecutorRuntime(ctx, stderr, *logLevel, *logFormat, *metricsAddr)
	if err != nil {
		return err
	}
	defer rt.close() // after Run closed the server (and killed its sessions' groups)
	log, guard, tm, tr := rt.log, rt.guard, rt.tm, rt.tr
	setMemoryLimit(*maxUnackedTotal, log)
	return serve.Run(ctx, serve.Config{
		Listen: l,
		Server: executor.Options{
			ProcessGuard:               guard,
			CodexHome:                  codexHomeDir(),
			ConcurrentRequests:         *concurrent,
			SessionTTL:                 *ttl,
			MaxRetainedBytes:           *maxBytes,
			MaxRetainedChunks:          *maxChunks,
			MaxUnackedTotalBytes:       *maxUnackedTotal,
			PrependPathDirs:            pathDirs,
			Sandbox:                    startSandbox(ctx, *sandboxBackend, log),
			TCPUpstreamProxy:           proxy.upstream.String(),
			LinuxSandboxTransparentTCP: *proxy.transparentTCP,
			Observer:                   telemetry.WithTracing(executorObserver(tm), tr),
			TunnelPolicy:               tunnelPolicy,
			TunnelListenPolicy:         tunnelListenPolicy,
		},
		Stdin:    stdin,
		Stdout:   stdout,
		Logger:   log,
		Auth:     auth,
		OnServer: func(srv *executor.Server) { trackSessions(tm, srv) },
	})
}
