package serve

import (
	"context"
	"io"
	"log/slog"

	"github.com/execlab/executor/executor"
)

// Config is the configuration of `executor serve`.
type Config struct {
	Listen             Listen
	ConcurrentRequests int
	Server             executor.Options
	Stdin              io.Reader // stdio transport input
	Stdout             io.Writer // the ws:// line, or the stdio transport output
	Logger             *slog.Logger
}

// Run serves until ctx ends (or stdin closes in stdio mode), then kills every process of
// every session and returns.
func Run(ctx context.Context, cfg Config) error {
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	opts := cfg.Server
	opts.Logger = log
	srv := executor.NewServer(&opts)
	defer srv.Close()
	if cfg.Listen.Stdio {
		return serveStdio(ctx, srv, cfg.Stdin, cfg.Stdout)
	}
	return serveWebSocket(ctx, srv, cfg.Listen, cfg.Stdout, log)
}
