package server

import (
	"context"
	"crypto/sha256"
	"errors"
	"net/http"

	"github.com/execlab/executor/registry/api"
)

// validate is R2 (spec/registry-auth.md §4): consume a single-use harness authorization
// issued by connect for this environment, this registration and this harness key.
// {valid:false} for an unknown, expired, replayed or mismatched authorization; 409
// registration_fenced when the caller's registration is no longer current.
func (s *Server) validate(ctx context.Context, c call, r *http.Request) (res any, err error) {
	defer func() { s.opts.Observer.Validated(validateOutcome(res, err)) }()
	env := c.env
	var req api.ValidateRequest
	if err := decodeStrict(r.Body, &req); err != nil {
		return nil, err
	}
	key, err := publicKey(req.HarnessPublicKey, "harness_public_key")
	if err != nil {
		return nil, err
	}
	reg, err := s.opts.Store.Registration(ctx, env)
	if errors.Is(err, ErrNotFound) || (err == nil && reg.RegistrationID != req.ExecutorRegistrationID) {
		return nil, api.NewError(http.StatusConflict, api.CodeRegistrationFenced, "registration is not current")
	}
	if err != nil {
		return nil, err
	}
	if len(req.HarnessKeyAuthorization) > api.MaxAuthorizationLen {
		return api.ValidateResponse{Valid: false}, nil
	}
	ok, err := s.opts.Store.ConsumeAuthorization(ctx, sha256.Sum256([]byte(req.HarnessKeyAuthorization)),
		env, reg.RegistrationID, sha256.Sum256(key), s.opts.Now())
	if err != nil {
		return nil, err
	}
	s.log.Debug("harness authorization checked", "environment_id", env, "valid", ok)
	return api.ValidateResponse{Valid: ok}, nil
}
