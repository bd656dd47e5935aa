package server

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"net/http"
	"time"

	"github.com/execlab/executor/registry/api"
	"github.com/execlab/executor/registry/rendezvous"
)

// connect is R3 (spec/registry-auth.md §5): for an online environment, issue a single-use,
// short-lived harness key authorization bound to the current registration and the harness
// key, and a signed harness rendezvous URL. 409 environment_offline when no executor socket
// of the current registration is open.
func (s *Server) connect(ctx context.Context, env string, r *http.Request) (any, error) {
	var req api.ConnectRequest
	if err := decodeStrict(r.Body, &req); err != nil {
		return nil, err
	}
	key, err := api.CanonicalPublicKey(req.HarnessPublicKey)
	if err != nil {
		return nil, api.NewError(http.StatusBadRequest, api.CodeInvalidRequest, "invalid harness_public_key")
	}
	offline := api.NewError(http.StatusConflict, api.CodeEnvironmentOffline, "no executor is connected for this environment")
	reg, err := s.opts.Store.Registration(ctx, env)
	if errors.Is(err, ErrNotFound) {
		return nil, offline
	}
	if err != nil {
		return nil, err
	}
	if gen, ok := s.opts.Hub.Online(env); !ok || gen != reg.Generation {
		return nil, offline
	}
	now := s.opts.Now()
	s.maybePrune(ctx, now)
	authz := randomToken(authorizationPrefix)
	// issueMu makes count-then-insert atomic within this process, so the bound is exact
	// here (processes sharing one PostgreSQL database may overshoot it by their number).
	s.issueMu.Lock()
	live, err := s.opts.Store.LiveAuthorizations(ctx, env, now)
	if err == nil && live >= s.opts.MaxLiveAuthorizations {
		err = api.NewError(http.StatusTooManyRequests, api.CodeRateLimited, "too many outstanding connect bundles for this environment")
	}
	if err == nil {
		err = s.opts.Store.IssueAuthorization(ctx, Authorization{
			TokenHash: sha256.Sum256([]byte(authz)), EnvironmentID: env, RegistrationID: reg.RegistrationID,
			HarnessKeyHash: sha256.Sum256(key), ExpiresAt: now.Add(s.opts.AuthorizationTTL),
		})
	}
	s.issueMu.Unlock()
	if err != nil {
		return nil, err
	}
	return api.ConnectResponse{
		EnvironmentID: env,
		URL: s.opts.Signer.URL(s.wsBase, rendezvous.Claims{
			Role: rendezvous.RoleHarness, EnvironmentID: env, Generation: reg.Generation,
			Expires: now.Add(rendezvous.HarnessURLTTL),
		}),
		SecurityProfile:         api.SecurityProfile,
		ExecutorRegistrationID:  reg.RegistrationID,
		ExecutorPublicKey:       json.RawMessage(reg.ExecutorPublicKey),
		HarnessKeyAuthorization: authz,
	}, nil
}

// maybePrune deletes expired authorizations at most once per PruneInterval. Failures are
// logged and ignored: pruning only bounds the table.
func (s *Server) maybePrune(ctx context.Context, now time.Time) {
	s.pruneMu.Lock()
	due := now.Sub(s.lastPrune) >= PruneInterval
	if due {
		s.lastPrune = now
	}
	s.pruneMu.Unlock()
	if !due {
		return
	}
	if _, err := s.opts.Store.PruneAuthorizations(ctx, now); err != nil {
		s.log.Warn("pruning expired harness authorizations", "error", err.Error())
	}
}
