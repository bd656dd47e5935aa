package remote

import (
	"context"
	"errors"
	"github.com/execlab/executor/executor/process"
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/execlab/executor/executor"
	"github.com/execlab/executor/executor/jsonrpc"
	"github.com/execlab/executor/registry/client"
	"github.com/execlab/executor/relay/mux"
	"github.com/execlab/executor/sandbox"
)

// Command is `executor remote` after package main has parsed and checked its flags (usage
// errors and exit statuses stay in main). It is never mutated.
type Command struct {
	// RegistryURL is the registry base URL (--registry). Required.
	RegistryURL string
	// EnvironmentID is the environment to register as (--environment-id). Required.
	EnvironmentID string
	// Auth selects the registry credential source (noise transport only).
	Auth AuthConfig
	// Transport is TransportNoise (also when empty) or TransportDirect (--remote-transport).
	Transport string
	// AWS configures SigV4 for TransportDirect (--aws-sigv4, --aws-profile, --aws-region,
	// --aws-service); ignored otherwise.
	AWS AWSConfig
	// ExitOnStdinClose stops the command (returning nil) when stdin reaches EOF after
	// start-up (--exit-on-stdin-close). CredentialStdin implies it.
	ExitOnStdinClose bool
	// MaxStreams bounds the harness streams served at once (--max-streams); ≤ 0 means
	// DefaultMaxStreams.
	MaxStreams int
	// Server configures the executor.Server RunCommand creates (and closes). Its Logger and
	// Sandbox fields are ignored: Logger and Sandbox below are used.
	Server executor.Options
	// Sandbox, when not nil, is called once, after the start-up credentials are in, to
	// probe the host and build the launcher the server enforces sandbox intent with. Nil
	// means no sandbox (requests that need one fail closed).
	Sandbox func(ctx context.Context) *sandbox.Launcher
	// Logger receives structured logs. Nil discards.
	Logger *slog.Logger
	// Observer receives the relay loop's counts (Config.Observer). Nil means none. The
	// server's own counts go to Server.Observer.
	Observer Observer
	// Tracer traces each harness stream (Config.Tracer). Nil means none.
	Tracer HandshakeTracer
	// SpanTraceparent returns the traceparent of ctx's current span, "" when it has none.
	// When set, registry calls and upgrades made under a span (the validation inside a
	// stream's handshake span) carry it instead of the TRACEPARENT-derived one. Nil: never.
	SpanTraceparent func(ctx context.Context) string
	// OnServer, when not nil, is called once with the executor.Server RunCommand created,
	// before it serves (metrics read its session count). Nil means none.
	OnServer func(*executor.Server)
	// Forward, when set, replaces the executor: no executor.Server is created (Server,
	// Sandbox and OnServer are unused) and each authenticated harness stream is handed to
	// Forward, which returns when the stream is done (`exec-server forward`).
	Forward func(ctx context.Context, conn jsonrpc.MessageConn) error
	// AfterAuth, when set, runs once the credential source is chosen (and one-line
	// credentials are read), before the registry client is built; its error ends
	// RunCommand (exec-server forward checks --connect there, in the reference's order).
	AfterAuth func() error
	// Getenv reads the process environment (CODEX_ACCESS_TOKEN, CODEX_API_KEY, TRACEPARENT,
	// the auth endpoint overrides, HOME). Nil means os.Getenv; tests inject a map.
	Getenv func(string) string
}

// environ is the environment a Command reads.
type environ struct{ getenv func(string) string }

func (e environ) get(name string) string {
	if e.getenv == nil {
		return os.Getenv(name)
	}
	return e.getenv(name)
}

// homeDir is os.UserHomeDir, or $HOME from an injected environment.
func (e environ) homeDir() (string, error) {
	if e.getenv == nil {
		return os.UserHomeDir()
	}
	if h := e.getenv("HOME"); h != "" {
		return h, nil
	}
	return "", errors.New("$HOME is not defined")
}

// RunCommand runs `executor remote` until ctx is done (returning nil: a signal is a clean
// exit, spec/registry-auth.md §12), stdin closes when that stops the executor (nil), a
// credential frame is rejected, or registration fails (the error; the CLI exits 1).
//
// With Transport == TransportDirect it runs the direct transport instead (direct.go: SigV4
// signer from AWS, then RunDirect; no credential source is read from stdin), with the same
// stdin, server and exit rules.
//
// Order: stdin is prepared; the credential source is chosen (one-line credentials are read
// from stdin now); the registry client is built; the stdin pump starts when stdin must be
// read after start-up; with credential frames, the first frame is awaited; then the
// executor.Server is created, served through Run, and closed (killing every process) before
// RunCommand returns. RunCommand owns everything it starts: the pump is stopped and waited for
// on every return path (except on a stdin that cannot be interrupted, see stdinPump).
func RunCommand(ctx context.Context, cmd *Command, stdin io.Reader) error {
	if cmd.Transport == TransportDirect {
		return cmd.runDirect(ctx, stdin) // direct.go
	}
	log := cmd.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	env := environ{cmd.Getenv}
	in := openStdin(stdin, cmd.Auth.CredentialStdin || cmd.ExitOnStdinClose)
	defer in.close()

	var creds *client.CredentialStream
	var auth client.Auth
	if cmd.Auth.CredentialStdin {
		creds = client.NewCredentialStream(strings.TrimSpace(cmd.EnvironmentID), nil)
		auth = creds
	} else {
		var err error
		if auth, err = remoteAuth(cmd.Auth, cmd.RegistryURL, in.lines, env); err != nil {
			return err
		}
	}
	if cmd.AfterAuth != nil {
		if err := cmd.AfterAuth(); err != nil {
			return err
		}
	}
	tp := withSpanTraceparent(cmd.SpanTraceparent, Traceparent(env.get("TRACEPARENT")))
	reg, err := client.New(&client.Options{
		BaseURL: cmd.RegistryURL, EnvironmentID: cmd.EnvironmentID, Auth: auth, Traceparent: tp, Logger: log,
	})
	if err != nil {
		return err
	}

	// runCtx ends the executor when stdin does: the pump cancels it with errStdinEOF (exit
	// 0) or with the credential error (exit 1). Like ctx, it is the process lifetime.
	runCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	startPump(in, creds, cmd.ExitOnStdinClose, cancel)
	if creds != nil {
		if err := creds.WaitInitial(ctx); err != nil {
			if ctx.Err() != nil {
				return nil // signalled while waiting: exit 0
			}
			return err
		}
	}
	err = cmd.serve(ctx, runCtx, reg, tp, log)
	if serr, ok := stdinOutcome(ctx, runCtx); ok {
		if serr == nil {
			log.Info("stopping the executor: its parent closed stdin")
		}
		return serr
	}
	if ctx.Err() != nil {
		return nil // signalled (spec §12: exit 0), even when it interrupted a register
	}
	return err
}

// startPump starts the stdin reader that outlives start-up, if one is needed: credential
// frames (creds != nil) or a drain for exitOnClose. Its end cancels runCtx.
func startPump(in *stdinReader, creds *client.CredentialStream, exitOnClose bool, cancel context.CancelCauseFunc) {
	switch {
	case creds != nil:
		in.startPump(true, creds.ReadFrames, func(err error) {
			// EOF once a registry request has carried a credential stops the executor
			// (exit 0); EOF before that fails start-up ("pipe closed", exit 1), even when
			// WaitInitial already saw the first frame.
			if errors.Is(err, client.ErrCredentialPipeClosed) && creds.Used() {
				err = errStdinEOF
			}
			cancel(err)
		})
	case exitOnClose:
		in.startPump(false, drainStdin, func(error) { cancel(errStdinEOF) })
	}
}

// serve creates the executor.Server, runs the relay loop with it until runCtx ends or a
// registration fails, and closes the server (it created it) before returning. ctx, the
// process lifetime, is what the sandbox probe runs under.
func (cmd *Command) serve(ctx, runCtx context.Context, reg Registry, tp func(context.Context) string, log *slog.Logger) error {
	if cmd.Forward != nil {
		return Run(runCtx, Config{Registry: reg, Forward: cmd.Forward, Mux: &mux.Options{MaxStreams: cmd.MaxStreams},
			Traceparent: tp, Logger: log, Observer: cmd.Observer, Tracer: cmd.Tracer})
	}
	opts := cmd.Server
	opts.Logger = log
	opts.Sandbox = nil
	if cmd.Sandbox != nil {
		opts.Sandbox = cmd.Sandbox(ctx)
	}
	maxStreams := cmd.MaxStreams
	if maxStreams <= 0 {
		maxStreams = DefaultMaxStreams
	}
	srv := executor.NewServer(&opts)
	defer srv.Close()
	if cmd.OnServer != nil {
		cmd.OnServer(srv)
	}
	return Run(runCtx, Config{
		Registry:     reg,
		Server:       srv,
		Mux:          &mux.Options{MaxStreams: maxStreams},
		Traceparent:  tp,
		Logger:       log,
		Observer:     cmd.Observer,
		Tracer:       cmd.Tracer,
		OnRegistered: exitNoticeToGuard(reg, opts.ProcessGuard),
	})
}

// exitNoticer is what builds the exit notice of a registration (*client.Client).
type exitNoticer interface {
	ExitNotice(client.Registration) (url string, body []byte, ok bool)
}

// exitNoticeToGuard returns the OnRegistered hook that gives the process guard each
// registration's exit notice (docs/reliability.md §5): when the executor dies, the guard
// kills its process groups and tells our registry, which tells harnesses that the session
// is gone instead of letting them retry for their whole window. Nil (no hook) without a
// guard; a registration without a token (a released or cloud registry) changes nothing.
func exitNoticeToGuard(reg Registry, guard *process.Guard) func(client.Registration) {
	n, ok := reg.(exitNoticer)
	if !ok || guard == nil {
		return nil
	}
	return func(r client.Registration) {
		if url, body, ok := n.ExitNotice(r); ok {
			guard.SetExitNotice(url, body)
		}
	}
}
