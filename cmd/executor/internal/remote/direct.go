package remote

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"time"

	"github.com/coder/websocket"

	"github.com/execlab/executor/cmd/executor/internal/serve"
	"github.com/execlab/executor/executor"
	"github.com/execlab/executor/registry/direct"
	"github.com/execlab/executor/relay/wsconn"
)

// Remote transports (--remote-transport).
const (
	// TransportNoise is the default: registry + rendezvous relay + Noise (Run).
	TransportNoise = "noise"
	// TransportDirect is the reference's direct transport: SigV4-signed registration and
	// WebSocket, plain JSON-RPC on it (RunDirect; docs/direct-transport.md).
	TransportDirect = "direct"
)

// Direct-transport limits (implementation choices, as `executor serve`'s socket).
const (
	// directMaxMessageBytes is the read limit of the direct socket (bytes), `serve`'s 64 MiB.
	directMaxMessageBytes = 64 << 20
	// directPingInterval and directPongTimeout keep the direct socket alive through idle
	// timeouts of the front (API Gateway closes idle sockets after 10 minutes).
	directPingInterval = 30 * time.Second
	directPongTimeout  = 60 * time.Second
)

// AWSConfig is the SigV4 configuration of the direct transport (--aws-*). The zero value
// with SigV4 set uses the AWS SDK's default chains and the execute-api service.
type AWSConfig struct {
	// SigV4 signs the registration and the upgrade (--aws-sigv4). The direct transport
	// requires it, as the reference does.
	SigV4 bool
	// Profile is the shared-config profile (--aws-profile); empty: AWS_PROFILE / default.
	Profile string
	// Region is the signing region (--aws-region); empty: the SDK region chain.
	Region string
	// Service is the signing service (--aws-service); empty: execute-api.
	Service string
	// Now is the signing clock; nil means time.Now (tests sign outside the skew with it).
	Now func() time.Time
}

// ErrDirectNeedsSigV4 is returned for the direct transport without AWSConfig.SigV4 (the
// reference's text).
var ErrDirectNeedsSigV4 = errors.New("--remote-transport direct requires --aws-sigv4")

// DirectConfig configures RunDirect. It is never mutated.
type DirectConfig struct {
	// BaseURL is the registry base URL; EnvironmentID the environment. Required.
	BaseURL, EnvironmentID string
	// Signer signs the registration and every upgrade. Required.
	Signer *direct.Signer
	// Server serves each socket. Required; RunDirect does not close it.
	Server *executor.Server
	// HTTPClient sends the registration and the upgrades. Nil: no redirects, default
	// transport.
	HTTPClient *http.Client
	// Backoff is the redial schedule after a dropped socket or a network error. Nil: 1 s
	// doubling to RedialBackoffMax, uniform in [base/2, base], reset on every connection.
	Backoff *wsconn.Backoff
	// Traceparent adds a W3C traceparent to each upgrade (unsigned); nil means none.
	Traceparent func(context.Context) string
	// Logger receives structured logs. Nil discards.
	Logger *slog.Logger
}

// RunDirect registers once, then keeps one signed WebSocket to the registration's url and
// serves JSON-RPC on it with Server, redialling after a drop, until ctx is done (nil). It
// returns the error of a failed registration, and of an upgrade answered with an HTTP
// status (a refused signature is not retried: the reference exits, PROBED); a network
// error is retried with back-off. Everything it starts has ended when it returns.
func RunDirect(ctx context.Context, cfg DirectConfig) error {
	if cfg.Signer == nil || cfg.Server == nil {
		return errors.New("remote: Signer and Server are required")
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	log = log.With("component", "remote", "transport", TransportDirect)
	backoff := cfg.Backoff
	if backoff == nil {
		backoff = &wsconn.Backoff{Max: RedialBackoffMax}
	}
	reg, err := direct.Register(ctx, direct.Options{BaseURL: cfg.BaseURL, EnvironmentID: cfg.EnvironmentID,
		Signer: cfg.Signer, HTTPClient: cfg.HTTPClient})
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
	log.Info("direct exec-server registered", "environment_id", reg.EnvironmentID, "registration_id", reg.RegistrationID)
	for attempt := 1; ; attempt++ {
		if ctx.Err() != nil {
			return nil
		}
		h := http.Header{}
		reqID := newRequestID()
		h.Set("x-request-id", reqID)
		if cfg.Traceparent != nil {
			if tp := cfg.Traceparent(ctx); tp != "" {
				h.Set("traceparent", tp)
			}
		}
		c, err := direct.Dial(ctx, reg.URL, direct.DialOptions{Signer: cfg.Signer, HTTPClient: cfg.HTTPClient, Header: h})
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			var de *direct.Error
			if errors.As(err, &de) && (de.Status != 0 || de.Kind == direct.ErrAuth || de.Kind == direct.ErrConfig) {
				return err
			}
			log.Warn("direct exec-server connection failed; retrying", "request_id", reqID, "connection_attempt", attempt, "error", err)
			if wsconn.Sleep(ctx, backoff.Next()) != nil {
				return nil
			}
			continue
		}
		backoff.Reset()
		log.Info("direct exec-server connected", "environment_id", reg.EnvironmentID,
			"registration_id", reg.RegistrationID, "request_id", reqID, "connection_attempt", attempt)
		if err := serveDirectSocket(ctx, c, cfg.Server); err != nil && ctx.Err() == nil {
			log.Debug("direct exec-server socket ended", "error", err)
		}
		if ctx.Err() != nil {
			return nil
		}
		if wsconn.Sleep(ctx, backoff.Next()) != nil {
			return nil
		}
	}
}

// serveDirectSocket serves JSON-RPC on c until it ends or ctx is done (serve's socket
// loop, with the direct socket's limits).
func serveDirectSocket(ctx context.Context, c *websocket.Conn, srv *executor.Server) error {
	return serve.ServeWebSocket(ctx, c, srv, executor.ConnInfo{Transport: executor.TransportWebSocket, Peer: "direct"},
		directMaxMessageBytes, directPingInterval, directPongTimeout)
}

// runDirect is RunCommand for Transport == TransportDirect: no registry credential source
// (the signature is the credential), stdin only for ExitOnStdinClose.
func (cmd *Command) runDirect(ctx context.Context, stdin io.Reader) error {
	if !cmd.AWS.SigV4 {
		return ErrDirectNeedsSigV4
	}
	log := cmd.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	env := environ{cmd.Getenv}
	signer, err := direct.LoadSigner(ctx, direct.SignerOptions{Profile: cmd.AWS.Profile, Region: cmd.AWS.Region,
		Service: cmd.AWS.Service, Now: cmd.AWS.Now})
	if err != nil {
		return err
	}
	// The reference's order: the credential chain (a region error) first, then the
	// checks that follow authentication (exec-server: an empty environment id).
	if cmd.AfterAuth != nil {
		if err := cmd.AfterAuth(); err != nil {
			return err
		}
	}
	in := openStdin(stdin, cmd.ExitOnStdinClose)
	defer in.close()
	runCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	startPump(in, nil, cmd.ExitOnStdinClose, cancel)

	opts := cmd.Server
	opts.Logger = log
	opts.Sandbox = nil
	if cmd.Sandbox != nil {
		opts.Sandbox = cmd.Sandbox(ctx)
	}
	srv := executor.NewServer(&opts)
	if cmd.OnServer != nil {
		cmd.OnServer(srv)
	}
	err = RunDirect(runCtx, DirectConfig{
		BaseURL: cmd.RegistryURL, EnvironmentID: cmd.EnvironmentID, Signer: signer, Server: srv,
		Traceparent: withSpanTraceparent(cmd.SpanTraceparent, Traceparent(env.get("TRACEPARENT"))), Logger: log,
	})
	srv.Close()
	if serr, ok := stdinOutcome(ctx, runCtx); ok {
		if serr == nil {
			log.Info("stopping the executor: its parent closed stdin")
		}
		return serr
	}
	if ctx.Err() != nil {
		return nil
	}
	return err
}
