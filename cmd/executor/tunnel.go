package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/execlab/executor/cmd/executor/internal/tunnelcli"
)

func runTunnel(ctx context.Context, args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("executor tunnel", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, `usage: executor tunnel [--registry URL --environment-id ID --token-file F | --url ws://… [--auth-bearer-token-file F]] (-L [BIND:]LPORT:HOST:HPORT | -D [BIND:]PORT | -R [BIND:]RPORT:HOST:HPORT)…

Forwards local ports to destinations as the executor's host sees them, through the
executor's connection (no port is opened on the executor's host). -L as ssh's; -D is a
SOCKS5 proxy (CONNECT, names resolved by the executor). BIND defaults to 127.0.0.1. The
executor's --tunnel-allow decides which destinations are allowed (loopback by default).
-R as ssh's: the executor listens on BIND:RPORT of its host (RPORT 0: a free port, logged)
and each connection to it is connected here to HOST:HPORT; its --tunnel-listen-allow
decides which binds are allowed (loopback by default).
Runs until SIGINT/SIGTERM; a broken relay resets open connections but keeps the
listeners (-R listeners are re-established). Exits 255 when the first connection fails or the executor has no tunnels.

Flags:
`)
		fs.PrintDefaults()
	}
	target := addTargetFlags(fs, "environment [EXECUTOR_ENVIRONMENT_ID]", "with --url: file holding the listener's bearer token [EXECUTOR_AUTH_BEARER_TOKEN_FILE]")
	var locals, socks, remotes stringList
	fs.Var(&locals, "L", "[BIND:]LPORT:HOST:HPORT: forward connections to BIND:LPORT to HOST:HPORT (repeatable)")
	fs.Var(&socks, "D", "[BIND:]PORT: SOCKS5 proxy whose CONNECTs open tunnels (repeatable)")
	fs.Var(&remotes, "R", "[BIND:]RPORT:HOST:HPORT: the executor listens on BIND:RPORT of its host; connections are connected here to HOST:HPORT (repeatable)")
	reconnect := fs.Duration("reconnect-timeout", defaultReconnectTimeout, "through a registry: how long to keep trying to resume the session after the connection breaks (then it is dialled anew)")
	logLevel := fs.String("log-level", envOr("EXECUTOR_LOG_LEVEL", "warn"), "log level on stderr [EXECUTOR_LOG_LEVEL]")
	logFormat := logFormatFlag(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%w: unexpected argument %q", errUsage, fs.Arg(0))
	}
	cfg := tunnelcli.Config{ReconnectTimeout: *reconnect}
	for _, s := range locals {
		f, err := tunnelcli.ParseLocal(s)
		if err != nil {
			return fmt.Errorf("%w: %w", errUsage, err)
		}
		cfg.Locals = append(cfg.Locals, f)
	}
	for _, s := range socks {
		a, err := tunnelcli.ParseSocks(s)
		if err != nil {
			return fmt.Errorf("%w: %w", errUsage, err)
		}
		cfg.Socks = append(cfg.Socks, a)
	}
	for _, s := range remotes {
		r, err := tunnelcli.ParseRemote(s)
		if err != nil {
			return fmt.Errorf("%w: %w", errUsage, err)
		}
		cfg.Remotes = append(cfg.Remotes, r)
	}
	if len(cfg.Locals)+len(cfg.Socks)+len(cfg.Remotes) == 0 {
		return fmt.Errorf("%w: give at least one -L, -D or -R", errUsage)
	}
	t, err := target.resolve()
	if err != nil {
		return err
	}
	cfg.URL, cfg.AuthBearerToken, cfg.Registry, cfg.EnvironmentID, cfg.Token = t.url, t.authBearerToken, t.registry, t.environmentID, t.token
	log, err := newLogger(stderr, *logLevel, *logFormat)
	if err != nil {
		return err
	}
	cfg.Logger = log
	err = tunnelcli.Run(ctx, cfg)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, tunnelcli.ErrUnsupported), errors.Is(err, tunnelcli.ErrListenUnsupported):
		fmt.Fprintf(stderr, "executor tunnel: %v\n", err)
		return &errExitCode{code: execTransportFailure}
	case ctx.Err() != nil:
		return nil
	default:
		fmt.Fprintf(stderr, "executor tunnel: %v\n", err)
		return &errExitCode{code: execTransportFailure}
	}
}
