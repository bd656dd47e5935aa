package remote

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"sync"

	"github.com/execlab/executor/executor"
	"github.com/execlab/executor/executor/jsonrpc"
	"github.com/execlab/executor/noise"
	"github.com/execlab/executor/registry/api"
	"github.com/execlab/executor/registry/client"
	"github.com/execlab/executor/relay/mux"
	"github.com/execlab/executor/relay/wsconn"
)

// Registry is what Run needs from the registry client. *client.Client implements it as is:
// keys are the JSON key objects (noise.PublicKey.AppendJSON) the registry stores verbatim.
type Registry interface {
	Register(ctx context.Context, executorKey json.RawMessage) (client.Registration, error)
	Validate(ctx context.Context, registrationID, streamID string, harnessKey json.RawMessage, authorization string) error
}

var _ Registry = (*client.Client)(nil)

// Config configures Run. It is never mutated.
type Config struct {
	// Registry registers the executor and validates harness keys. Required; usually a
	// *client.Client.
	Registry Registry
	// Server is the JSON-RPC server every authenticated stream is served by. Required. Run
	// does not close it: whoever created it closes it after Run returns (by then every
	// ServeConn Run started has returned).
	Server *executor.Server
	// Forward, when Server is nil, serves each authenticated stream instead (Command.Forward).
	Forward func(ctx context.Context, conn jsonrpc.MessageConn) error
	// Identity is the executor's Noise identity. Nil means a fresh one (the normal case: one
	// identity per process, never persisted).
	Identity *noise.Identity
	// Mux tunes the stream multiplexer (MaxStreams for benchmarks). Nil means the reference's
	// limits. Its Logger is ignored (Logger is used).
	Mux *mux.Options
	// Conn tunes each rendezvous websocket (ping interval, pong deadline). Nil means defaults.
	Conn *wsconn.Options
	// HTTPClient performs the websocket upgrade. Nil means wsconn's default.
	HTTPClient *http.Client
	// Backoff is the redial schedule. Nil means 1 s doubling to RedialBackoffMax (2 s),
	// uniform in [base/2, base]; it is reset after every successful upgrade and every
	// successful re-registration.
	Backoff *wsconn.Backoff
	// Traceparent adds a W3C traceparent to each upgrade request; nil means none.
	Traceparent func(context.Context) string
	// Logger receives structured logs. Nil discards.
	Logger *slog.Logger
	// Observer receives the loop's and the muxes' counts (metrics.go). Nil means none.
	Observer Observer
	// Tracer traces each harness stream (metrics.go). Nil means none.
	Tracer HandshakeTracer
	// OnRegistered, when not nil, is called after every successful registration, on Run's
	// goroutine (RunCommand hands the registration's exit notice to the process guard).
	OnRegistered func(client.Registration)
}

// runner is the state of one Run.
type runner struct {
	cfg      Config
	obs      Observer
	log      *slog.Logger
	regs     int // successful registrations so far; only Run's goroutine touches it
	identity *noise.Identity
	keyJSON  []byte
	backoff  *wsconn.Backoff
}

// Run registers, then keeps one rendezvous socket up and serves its streams until ctx is done
// (returning nil) or a registration fails (returning the registry's error).
func Run(ctx context.Context, cfg Config) error {
	if cfg.Registry == nil || (cfg.Server == nil && cfg.Forward == nil) {
		return errors.New("remote: Registry and Server (or Forward) are required")
	}
	r := &runner{cfg: cfg, obs: cfg.Observer, log: cfg.Logger, backoff: cfg.Backoff}
	if r.obs == nil {
		r.obs = nopObserver{}
	}
	if r.log == nil {
		r.log = slog.New(slog.DiscardHandler)
	}
	r.log = r.log.With("component", "remote")
	if r.backoff == nil {
		r.backoff = &wsconn.Backoff{Max: RedialBackoffMax}
	}
	r.identity = cfg.Identity
	if r.identity == nil {
		id, err := noise.GenerateIdentity(nil)
		if err != nil {
			return fmt.Errorf("generating executor identity: %w", err)
		}
		r.identity = id
	}
	pub := r.identity.Public()
	r.keyJSON = pub.AppendJSON(nil)

	reg, err := r.register(ctx)
	if err != nil {
		return err
	}
	for attempt := 1; ; attempt++ {
		if ctx.Err() != nil {
			return nil
		}
		reqID := newRequestID()
		conn, err := r.dial(ctx, reg.URL, reqID)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			var de *wsconn.DialError
			status := 0
			if errors.As(err, &de) {
				status = de.StatusCode
			}
			if status != 0 {
				r.obs.RendezvousDial(DialHTTPError)
			} else {
				r.obs.RendezvousDial(DialNetworkError)
			}
			r.log.Warn("Noise relay rendezvous connection failed", "noise_event", "rendezvous_connection",
				"noise_outcome", "error", "noise_reason", "websocket_error", "error_kind", errorKind(status),
				"http_status", status, "request_id", reqID, "connection_attempt", attempt, "error", err)
			delay := r.backoff.Next()
			if de != nil && de.IsClientError() {
				if reg, err = r.register(ctx); err != nil {
					return err
				}
				// Registered: the registry is back. Dial at once (with jitter) instead
				// of sleeping a back-off grown during the outage.
				r.backoff.Reset()
				delay = rand.N(registeredJitter)
			}
			if wsconn.Sleep(ctx, delay) != nil {
				return nil
			}
			continue
		}
		r.backoff.Reset()
		r.obs.RendezvousDial(DialOK)
		r.log.Info("Noise relay rendezvous connected", "noise_event", "rendezvous_connection",
			"noise_outcome", "ok", "request_id", reqID, "connection_attempt", attempt)
		r.log.Debug("Noise relay rendezvous url", "url", wsconn.RedactURL(reg.URL))
		reason := r.serveSocket(ctx, conn, reg)
		if ctx.Err() != nil {
			return nil
		}
		r.log.Warn("Noise relay rendezvous disconnected", "noise_event", "rendezvous_connection",
			"noise_outcome", "disconnected", "noise_reason", reason.String(), "request_id", reqID,
			"connection_attempt", attempt)
		if wsconn.Sleep(ctx, r.backoff.Next()) != nil {
			return nil
		}
	}
}

func errorKind(status int) string {
	if status != 0 {
		return "http"
	}
	return "network"
}

func (r *runner) register(ctx context.Context) (client.Registration, error) {
	reg, err := r.cfg.Registry.Register(ctx, r.keyJSON)
	if err != nil {
		return client.Registration{}, err
	}
	r.obs.Registered(r.regs > 0)
	r.regs++
	if r.cfg.OnRegistered != nil {
		r.cfg.OnRegistered(reg)
	}
	r.log.Info("Noise executor registered", "noise_event", "registration", "noise_outcome", "ok",
		"security_profile", api.SecurityProfile)
	r.log.Debug("Noise executor registration", "environment_id", reg.EnvironmentID,
		"executor_registration_id", reg.RegistrationID)
	return reg, nil
}

func (r *runner) dial(ctx context.Context, rawURL, reqID string) (*wsconn.Conn, error) {
	h := http.Header{}
	h.Set("x-request-id", reqID)
	if r.cfg.Traceparent != nil {
		if tp := r.cfg.Traceparent(ctx); tp != "" {
			h.Set("traceparent", tp)
		}
	}
	return wsconn.Dial(ctx, rawURL, &wsconn.DialOptions{Header: h, HTTPClient: r.cfg.HTTPClient, Conn: r.connOptions()})
}

func (r *runner) connOptions() *wsconn.Options {
	var o wsconn.Options
	if r.cfg.Conn != nil {
		o = *r.cfg.Conn
	}
	o.Logger = r.log
	return &o
}

// serveSocket runs the mux and the keepalive on one socket until it ends or ctx is done, and
// returns why it ended.
func (r *runner) serveSocket(ctx context.Context, conn *wsconn.Conn, reg client.Registration) wsconn.CloseReason {
	var mo mux.Options
	if r.cfg.Mux != nil {
		mo = *r.cfg.Mux
	}
	mo.Logger = r.log
	mo.Observer = r.obs
	m := mux.New(conn, func(sctx context.Context, s *mux.Stream) { r.serveStream(sctx, s, reg) }, &mo)
	untrack := r.obs.TrackMux(m.Stats)
	defer untrack()

	kctx, stopKeepalive := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		if err := conn.Keepalive(kctx); err != nil {
			r.log.Debug("keepalive ended the rendezvous socket", "error", err)
		}
	}()
	err := m.Run(ctx)
	stopKeepalive()
	wg.Wait()
	if err != nil {
		r.log.Debug("rendezvous socket ended", "error", err)
	}
	return conn.Reason()
}
