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
// of the current registration is open, with executor_exited set (our extension) when that
// registration's executor reported its exit.
//
// Each token holds at most MaxLiveAuthorizationsPerToken of the environment's
// MaxLiveAuthorizations outstanding authorizations, and a token the rendezvous has paused
// for failed streams (rendezvous.HarnessFailureBudget) gets 429 rate_limited; the bundle's
// URL names the token's id as its subject, by which the rendezvous counts its sockets.
func (s *Server) connect(ctx context.Context, c call, r *http.Request) (any, error) {
	env := c.env
	var req api.ConnectRequest
	if err := decodeStrict(r.Body, &req); err != nil {
		return nil, err
	}
	key, err := publicKey(req.HarnessPublicKey, "harness_public_key")
	if err != nil {
		return nil, err
	}
	offline := api.NewError(http.StatusConflict, api.CodeEnvironmentOffline, "no executor is connected for this environment")
	reg, err := s.opts.Store.Registration(ctx, env)
	if errors.Is(err, ErrNotFound) {
		return nil, offline
	}
	if err != nil {
		return nil, err
	}
	if !reg.ExitedAt.IsZero() {
		// The current registration's executor reported its exit (executor_exited.go):
		// offline, and our harnesses learn that no session of it can come back.
		offline.ExecutorExited = true
		return nil, offline
	}
	base, err := s.locate(ctx, env, reg.Generation, c.tokenID)
	if err != nil {
		return nil, err
	}
	now := s.opts.Now()
	s.maybePrune(ctx, now)
	authz := randomToken(authorizationPrefix)
	// issueMu makes count-then-insert atomic within this process, so the bound is exact
	// here (processes sharing one PostgreSQL database may overshoot it by their number).
	s.issueMu.Lock()
	live, mine, err := s.opts.Store.LiveAuthorizations(ctx, env, c.tokenID, now)
	switch {
	case err != nil:
	case mine >= s.opts.MaxLiveAuthorizationsPerToken:
		err = api.NewError(http.StatusTooManyRequests, api.CodeRateLimited, "too many outstanding connect bundles for this token")
	case live >= s.opts.MaxLiveAuthorizations:
		err = api.NewError(http.StatusTooManyRequests, api.CodeRateLimited, "too many outstanding connect bundles for this environment")
	default:
		err = s.opts.Store.IssueAuthorization(ctx, Authorization{
			TokenHash: sha256.Sum256([]byte(authz)), EnvironmentID: env, RegistrationID: reg.RegistrationID,
			HarnessKeyHash: sha256.Sum256(key), ExpiresAt: now.Add(s.opts.AuthorizationTTL), TokenID: c.tokenID,
		})
	}
	s.issueMu.Unlock()
	if err != nil {
		return nil, err
	}
	return api.ConnectResponse{
		EnvironmentID: env,
		URL: s.opts.Signer.URL(base, rendezvous.Claims{
			Role: rendezvous.RoleHarness, EnvironmentID: env, Generation: reg.Generation,
			Expires: now.Add(rendezvous.HarnessURLTTL), Subject: c.tokenID,
		}),
		SecurityProfile:         api.SecurityProfile,
		ExecutorRegistrationID:  reg.RegistrationID,
		ExecutorPublicKey:       json.RawMessage(reg.ExecutorPublicKey),
		HarnessKeyAuthorization: authz,
	}, nil
}

// locate returns the ws(s) base of the node holding the environment's executor socket of
// generation gen, or 409 environment_offline. Without a Node that is this process, asked
// of the Hub. With one, the store's location: this process's is checked against the Hub
// too (and for a paused token, which only the holding node's Hub knows); another live
// node's is trusted (its lease is current) and that node's upgrade checks the rest.
func (s *Server) locate(ctx context.Context, env string, gen int64, tokenID string) (string, error) {
	offline := api.NewError(http.StatusConflict, api.CodeEnvironmentOffline, "no executor is connected for this environment")
	base, local := s.wsBase, true
	if s.opts.Node != nil {
		loc, here, nodeBase, err := s.opts.Node.Locate(ctx, env)
		switch {
		case errors.Is(err, ErrNotFound):
			return "", offline
		case err != nil:
			return "", err
		case loc.Generation != gen:
			s.opts.Node.staleRefused() // an older registration's location
			return "", offline
		}
		base, local = nodeBase, here
	}
	if !local {
		return base, nil
	}
	if g, ok := s.opts.Hub.Online(env); !ok || g != gen {
		if s.opts.Node != nil {
			s.opts.Node.staleRefused() // recorded here, but this Hub no longer holds it
		}
		return "", offline
	}
	if err := s.opts.Hub.HarnessAllowed(env, tokenID); err != nil {
		return "", api.NewError(http.StatusTooManyRequests, api.CodeRateLimited, "too many failed harness streams with this token; retry later")
	}
	return base, nil
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
