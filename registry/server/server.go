package server

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/execlab/executor/registry/api"
	"github.com/execlab/executor/registry/rendezvous"
)

// Options configure a Server. Store, Tokens, Hub, Signer and PublicURL are required; the
// struct is never mutated.
type Options struct {
	Store  Store
	Tokens *Tokens
	// Hub is the rendezvous this registry hands out URLs for (same listener).
	Hub *rendezvous.Hub
	// Signer signs rendezvous URLs; it must be the Hub's.
	Signer *rendezvous.Signer
	// PublicURL is the http(s) base URL clients use to reach this server (with several
	// nodes: the load-balanced address of all of them), without a trailing slash;
	// executor rendezvous URLs use the same host with ws(s), so an executor redials
	// through any live node.
	PublicURL string
	// Node, when set, is this process's part in a set of nodes sharing Store: connect
	// hands out a harness URL on the node that holds the executor's socket (found in
	// the store) instead of asking only the local Hub. Nil: single process, as before.
	Node *Node
	// AuthorizationTTL overrides AuthorizationTTL. Zero means the default.
	AuthorizationTTL time.Duration
	// MaxLiveAuthorizations overrides MaxLiveAuthorizations. Zero means the default.
	MaxLiveAuthorizations int
	// MaxLiveAuthorizationsPerToken overrides MaxLiveAuthorizationsPerToken. Zero means the
	// default.
	MaxLiveAuthorizationsPerToken int
	// Logger receives debug/info events; never tokens, authorizations or keys. Nil discards.
	Logger *slog.Logger
	// Now is the clock. Nil means time.Now.
	Now func() time.Time
	// Observer receives validate outcomes (metrics.go). Nil means none.
	Observer Observer
}

// Server is the registry HTTP service plus the rendezvous upgrades on one handler. It is
// safe for concurrent use and starts no goroutines.
type Server struct {
	opts   Options
	log    *slog.Logger
	wsBase string

	// issueMu serialises connect's count-and-issue of authorizations (the per-environment
	// bound); held only around those two store calls.
	issueMu sync.Mutex

	// pruneMu guards lastPrune: concurrent connects elect one pruner.
	pruneMu   sync.Mutex
	lastPrune time.Time
}

// New checks opts and returns a Server.
func New(opts *Options) (*Server, error) {
	if opts == nil || opts.Store == nil || opts.Tokens == nil || opts.Hub == nil || opts.Signer == nil || opts.PublicURL == "" {
		return nil, errors.New("registry server: Store, Tokens, Hub, Signer and PublicURL are required")
	}
	o := *opts
	if o.AuthorizationTTL <= 0 {
		o.AuthorizationTTL = AuthorizationTTL
	}
	if o.MaxLiveAuthorizations <= 0 {
		o.MaxLiveAuthorizations = MaxLiveAuthorizations
	}
	if o.MaxLiveAuthorizationsPerToken <= 0 {
		o.MaxLiveAuthorizationsPerToken = MaxLiveAuthorizationsPerToken
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Observer == nil {
		o.Observer = nopObserver{}
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	base, err := wsBase(o.PublicURL)
	if err != nil {
		return nil, errors.New("registry server: PublicURL must be http:// or https://")
	}
	return &Server{opts: o, log: o.Logger.With("component", "registry"), wsBase: base}, nil
}

// GenerationFunc adapts a Store to rendezvous.Options.CurrentGeneration.
func GenerationFunc(st Store) func(ctx context.Context, env string) (int64, bool, error) {
	return func(ctx context.Context, env string) (int64, bool, error) {
		r, err := st.Registration(ctx, env)
		if errors.Is(err, ErrNotFound) {
			return 0, false, nil
		}
		if err != nil {
			return 0, false, err
		}
		return r.Generation, true, nil
	}
}

// ServeHTTP routes /readyz (200, or 503 while a Node does not hold its lease), the registry API under api.EnvironmentPathPrefix and the
// rendezvous upgrades under rendezvous.BasePath.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.URL.Path == "/readyz":
		if s.opts.Node != nil && !s.opts.Node.Ready() {
			w.WriteHeader(http.StatusServiceUnavailable) // lease lapsed: store unreachable or node id taken
			return
		}
		w.WriteHeader(http.StatusOK)
	case strings.HasPrefix(r.URL.Path, rendezvous.BasePath):
		s.opts.Hub.ServeHTTP(w, r)
	case strings.HasPrefix(r.URL.Path, api.EnvironmentPathPrefix):
		s.serveAPI(w, r)
	default:
		writeError(w, api.NewError(http.StatusNotFound, api.CodeNotFound, "no such endpoint"))
	}
}

func (s *Server) serveAPI(w http.ResponseWriter, r *http.Request) {
	rawEnv, suffix, ok := api.SplitPath(r.URL.Path)
	if !ok {
		writeError(w, api.NewError(http.StatusNotFound, api.CodeNotFound, "no such endpoint"))
		return
	}
	if suffix == api.ExecutorExitedSuffix {
		s.serveExecutorExited(w, r, rawEnv) // no bearer: the exit token is the credential
		return
	}
	var role Role
	var handle func(context.Context, call, *http.Request) (any, error)
	switch suffix {
	case api.RegisterSuffix:
		role, handle = RoleExecutor, s.register
	case api.ValidateSuffix:
		role, handle = RoleExecutor, s.validate
	case api.ConnectSuffix:
		role, handle = RoleHarness, s.connect
	default:
		writeError(w, api.NewError(http.StatusNotFound, api.CodeNotFound, "no such endpoint"))
		return
	}
	env, err := postedEnvironment(r, rawEnv)
	if err != nil {
		writeError(w, err)
		return
	}
	res, tokenID := s.opts.Tokens.check(r.Header.Get("Authorization"), role, env)
	switch res {
	case authMissing:
		writeError(w, api.NewError(http.StatusUnauthorized, api.CodeUnauthorized, "missing or unknown bearer token"))
		return
	case authOutOfScope:
		writeError(w, api.NewError(http.StatusForbidden, api.CodeForbidden, "token is not allowed this call for this environment"))
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, api.MaxRequestBody)
	// The handler's store calls get the same bound as the client's whole request
	// (api.RequestTimeout): past it the caller has given up anyway.
	ctx, cancel := context.WithTimeout(r.Context(), api.RequestTimeout)
	defer cancel()
	out, err := handle(ctx, call{env: env, tokenID: tokenID}, r)
	if err != nil {
		writeError(w, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(out)
}

// call is what the router established about an authenticated API request.
type call struct {
	env     string // validated environment id
	tokenID string // TokenID of the bearer
}

// decodeStrict decodes a JSON body with no unknown members and nothing after it.
func decodeStrict(r io.Reader, v any) error {
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return api.NewError(http.StatusBadRequest, api.CodeInvalidRequest, "malformed request body")
	}
	if dec.More() {
		return api.NewError(http.StatusBadRequest, api.CodeInvalidRequest, "malformed request body")
	}
	return nil
}

// publicKey is api.CanonicalPublicKey of a request's key member; a key that does not
// canonicalize is 400 invalid_request "invalid <member>".
func publicKey(raw json.RawMessage, member string) ([]byte, error) {
	key, err := api.CanonicalPublicKey(raw)
	if err != nil {
		return nil, api.NewError(http.StatusBadRequest, api.CodeInvalidRequest, "invalid "+member)
	}
	return key, nil
}

// postedEnvironment checks that r is a POST for the environment rawEnv names (exactly, as
// api.ValidateEnvironmentID accepts it) and returns the id, or the *api.Error to answer.
func postedEnvironment(r *http.Request, rawEnv string) (string, error) {
	if r.Method != http.MethodPost {
		return "", api.NewError(http.StatusMethodNotAllowed, api.CodeMethodNotAllowed, "use POST")
	}
	env, err := api.ValidateEnvironmentID(rawEnv)
	if err != nil || env != rawEnv {
		return "", api.NewError(http.StatusBadRequest, api.CodeInvalidRequest, "invalid environment id")
	}
	return env, nil
}

// writeError sends err as {"error":{code,message}}: an *api.Error as is, a store conflict
// as 503 registration_conflict, anything else as 500 without details.
func writeError(w http.ResponseWriter, err error) {
	var e *api.Error
	switch {
	case errors.As(err, &e):
	case errors.Is(err, ErrConflict):
		e = api.NewError(http.StatusServiceUnavailable, api.CodeRegistrationConflict, "a concurrent registration is being committed; retry")
	default:
		e = api.NewError(http.StatusInternalServerError, api.CodeInternal, "internal error")
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(e.Status)
	_ = json.NewEncoder(w).Encode(api.ErrorResponse{Error: api.ErrorBody{Code: e.Code, Message: e.Message, ExecutorExited: e.ExecutorExited}})
}

// randomToken returns prefix + 32 random bytes in unpadded base64url.
func randomToken(prefix string) string {
	var b [32]byte
	_, _ = rand.Read(b[:])
	return prefix + base64.RawURLEncoding.EncodeToString(b[:])
}

// randomID returns prefix + 16 random bytes in hex.
func randomID(prefix string) string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}
