package server

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"net/http"

	"github.com/execlab/executor/registry/api"
)

// serveExecutorExited is this registry's exit notice (docs/reliability.md §5, an
// extension: released executors never call it): the process guard of an executor that
// died posts {executor_registration_id, token} with the one-shot token its register
// response carried. When the registration is still the environment's current one and the
// token matches, the exit is recorded (in the store, so every node's connect sees it) and
// connect answers 409 environment_offline with executor_exited until a new registration.
//
// No bearer is asked: the guard outlives the executor and holds no credential but the
// token (32 random bytes, stored hashed, good once, bound to one registration). Every
// refusal is the same 404, so the endpoint tells a prober nothing.
func (s *Server) serveExecutorExited(w http.ResponseWriter, r *http.Request, rawEnv string) {
	notFound := api.NewError(http.StatusNotFound, api.CodeNotFound, "no such registration")
	env, err := postedEnvironment(r, rawEnv)
	if err != nil {
		writeError(w, err)
		return
	}
	var req api.ExitNoticeRequest
	if err := decodeStrict(http.MaxBytesReader(w, r.Body, api.MaxRequestBody), &req); err != nil {
		writeError(w, err)
		return
	}
	if req.ExecutorRegistrationID == "" || req.Token == "" || len(req.Token) > api.MaxExitNoticeTokenLen {
		writeError(w, notFound)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), api.RequestTimeout)
	defer cancel()
	ok, err := s.opts.Store.MarkExited(ctx, env, req.ExecutorRegistrationID, sha256.Sum256([]byte(req.Token)), s.opts.Now())
	switch {
	case err != nil:
		writeError(w, err)
		return
	case !ok:
		writeError(w, notFound)
		return
	}
	s.log.Info("executor reported its exit", "environment_id", env)
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(struct{}{})
}
