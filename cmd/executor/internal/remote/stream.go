package remote

import (
	"context"
	"errors"
	"fmt"

	"github.com/execlab/executor/executor"
	"github.com/execlab/executor/noise"
	"github.com/execlab/executor/noise/channel"
	"github.com/execlab/executor/registry/client"
	"github.com/execlab/executor/relay/mux"
)

// serveStream runs one harness stream: Noise responder with registry validation, then the
// JSON-RPC session. Returning ends the stream (the mux sends the reset, and charges the
// failure when the handshake did not complete).
func (r *runner) serveStream(ctx context.Context, s *mux.Stream, reg client.Registration) {
	r.obs.StreamStarted()
	defer r.obs.StreamEnded()
	var endSpan func(string)
	if r.cfg.Tracer != nil {
		ctx, endSpan = r.cfg.Tracer.StartHandshake(ctx, s.Traceparent())
	}
	handshake := func(outcome string) {
		r.obs.Handshake(outcome)
		if endSpan != nil {
			endSpan(outcome)
		}
	}
	prologue := noise.AppendPrologue(nil, reg.EnvironmentID, reg.RegistrationID, s.ID())
	conn, err := channel.Responder(ctx, recordConn{s}, &channel.ResponderConfig{
		Static:   r.identity,
		Prologue: prologue,
		Authorize: func(ctx context.Context, peer noise.PublicKey, authz []byte) error {
			err := r.cfg.Registry.Validate(ctx, reg.RegistrationID, s.ID(), peer.AppendJSON(nil), string(authz))
			if errors.Is(err, client.ErrValidateUnauthorized) {
				return fmt.Errorf("%w: %w", channel.ErrExecutorCredentialsRejected, err)
			}
			return err
		},
	})
	if err != nil {
		if ctx.Err() == nil {
			handshake(handshakeOutcome(err))
			r.logHandshakeFailure(err, reg, s.ID())
		} else {
			handshake(HandshakeCancelled)
		}
		return
	}
	defer conn.Close()
	if err := s.Established(); err != nil {
		handshake(HandshakeCapacity)
		r.log.Warn("resetting Noise relay stream", "noise_event", "handshake", "noise_outcome", "rejected",
			"noise_reason", "capacity", "stream_id", s.ID())
		return
	}
	handshake(HandshakeOK)
	r.log.Debug("Noise relay stream established", "noise_event", "handshake", "noise_outcome", "ok",
		"stream_id", s.ID())
	if r.cfg.Server == nil {
		err = r.cfg.Forward(ctx, conn)
	} else {
		err = r.cfg.Server.ServeConn(ctx, conn, executor.ConnInfo{Transport: executor.TransportRelay, FlowControlled: s.ARQ()})
	}
	r.log.Debug("Noise relay stream ended", "stream_id", s.ID(), "error", errText(err))
}

func (r *runner) logHandshakeFailure(err error, reg client.Registration, streamID string) {
	var aerr *channel.AuthorizeError
	if errors.As(err, &aerr) {
		r.log.Warn("Noise relay harness authorization failed", "noise_event", "authorization",
			"noise_outcome", "error", "noise_reason", "authorization_failed")
		r.log.Warn("Noise relay handshake rejected", "noise_event", "handshake", "noise_outcome", "rejected",
			"noise_reason", client.Reason(aerr.Err), "registry_status", client.RegistryStatus(aerr.Err),
			"environment_id", reg.EnvironmentID, "executor_registration_id", reg.RegistrationID,
			"stream_id", streamID)
		return
	}
	if errors.Is(err, mux.ErrStreamClosed) || errors.Is(err, mux.ErrStreamReset) || errors.Is(err, mux.ErrConnClosed) {
		return // cancelled by the peer or the mux; already accounted for there
	}
	r.log.Warn("Noise relay handshake rejected", "noise_event", "handshake", "noise_outcome", "rejected",
		"noise_reason", "handshake_request", "environment_id", reg.EnvironmentID,
		"executor_registration_id", reg.RegistrationID, "stream_id", streamID, "error", err)
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
