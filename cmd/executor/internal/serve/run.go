package serve

import (
	"context"
	"errors"
	"io"
	"log/slog"

	"github.com/execlab/executor/executor"
	"github.com/execlab/executor/internal/wsauth"
)

// ErrAuthWithStdio is the reference's refusal of --ws-auth with --listen stdio.
var ErrAuthWithStdio = errors.New("WebSocket auth requires a WebSocket listener, not stdio")

// Config is the configuration of `executor serve`.
type Config struct {
	Listen             Listen
	ConcurrentRequests int
	Server             executor.Options
	Stdin              io.Reader // stdio transport input
	Stdout             io.Writer // the ws:// line, or the stdio transport output
	Logger             *slog.Logger
	// Auth authorizes WebSocket upgrades (--ws-auth); nil accepts every upgrade. Must be
	// nil with Stdio.
	Auth *wsauth.Policy
	// MaxConns caps the listener's open connections; 0 derives it from RLIMIT_NOFILE
	// (see DefaultMaxConns).
	MaxConns int
	// OnServer, when not nil, is called once with the executor.Server Run created, before
	// it serves (metrics read its session count). Nil means none.
	OnServer func(*executor.Server)
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
	if cfg.OnServer != nil {
		cfg.OnServer(srv)
	}
	if cfg.Listen.Stdio {
		if cfg.Auth.Mode() != wsauth.ModeNone {
			return ErrAuthWithStdio
		}
		return serveStdio(ctx, srv, cfg.Stdin, cfg.Stdout)
	}
	return serveWebSocket(ctx, srv, cfg, log)
}
