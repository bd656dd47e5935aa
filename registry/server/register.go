package server

import (
	"context"
	"crypto/sha256"
	"net/http"

	"github.com/execlab/executor/registry/api"
	"github.com/execlab/executor/registry/rendezvous"
)

// register is R1 (spec/registry-auth.md §3): record a new registration (the next
// generation, fencing the previous one) and hand back a signed executor rendezvous URL.
func (s *Server) register(ctx context.Context, c call, r *http.Request) (any, error) {
	env := c.env
	var req api.RegisterRequest
	if err := decodeStrict(r.Body, &req); err != nil {
		return nil, err
	}
	if req.SecurityProfile != api.SecurityProfile {
		return nil, api.NewError(http.StatusBadRequest, api.CodeInvalidRequest, "unsupported security profile")
	}
	key, err := publicKey(req.ExecutorPublicKey, "executor_public_key")
	if err != nil {
		return nil, err
	}
	now := s.opts.Now()
	exitToken := randomToken(exitTokenPrefix)
	reg, err := s.opts.Store.Register(ctx, env, randomID(registrationPrefix), key, sha256.Sum256([]byte(exitToken)), now)
	if err != nil {
		return nil, err
	}
	s.opts.Hub.Fence(env, reg.Generation)
	s.log.Info("executor registered", "environment_id", env, "generation", reg.Generation)
	return api.RegisterResponse{
		EnvironmentID: env,
		URL: s.opts.Signer.URL(s.wsBase, rendezvous.Claims{
			Role: rendezvous.RoleEnvironment, EnvironmentID: env, Generation: reg.Generation,
			Expires: now.Add(rendezvous.ExecutorURLTTL),
		}),
		SecurityProfile:        api.SecurityProfile,
		ExecutorRegistrationID: reg.RegistrationID,
		ExitNoticeToken:        exitToken,
	}, nil
}
