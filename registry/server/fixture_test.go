package server_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/execlab/executor/registry/api"
	"github.com/execlab/executor/registry/registrytest"
	"github.com/execlab/executor/registry/rendezvous"
	"github.com/execlab/executor/registry/server"
	"github.com/execlab/executor/relay/wsconn"
)

// postgresDSNEnv names the DSN of a disposable PostgreSQL database for the store tests.
const postgresDSNEnv = registrytest.PostgresDSNEnv

// storeKinds returns the stores to run a test against: SQLite always, PostgreSQL when
// EXECUTOR_TEST_POSTGRES_DSN is set (required when CI=true).
func storeKinds(t *testing.T) []string {
	if registrytest.PostgresDSN(t) != "" {
		return []string{"sqlite", "postgres"}
	}
	return []string{"sqlite"}
}

// openStore opens a fresh store of the given kind. PostgreSQL tests share one database, so
// every test uses its own environment ids (uniqueEnv).
func openStore(t *testing.T, kind string) server.Store {
	t.Helper()
	dsn := filepath.Join(t.TempDir(), "registry.db")
	if kind == "postgres" {
		dsn = os.Getenv(postgresDSNEnv)
	}
	st, err := server.OpenStore(context.Background(), dsn)
	if err != nil {
		t.Fatalf("opening %s store: %v", kind, err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// uniqueEnv returns an environment id no other test run uses (PostgreSQL is shared).
func uniqueEnv(prefix string) string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return prefix + "-" + base64.RawURLEncoding.EncodeToString(b[:])
}

// clock is a settable clock shared by the server and the hub.
type clock struct{ ns atomic.Int64 }

func (c *clock) now() time.Time          { return time.Unix(0, c.ns.Load()) }
func (c *clock) advance(d time.Duration) { c.ns.Add(int64(d)) }

// fixture is a registry server + rendezvous hub served by server.NewHTTPServer (the
// production HTTP layer) on 127.0.0.1.
type fixture struct {
	t     *testing.T
	URL   string
	hub   *rendezvous.Hub
	store server.Store
	clock *clock
	http  *server.HTTPServer
}

// httpOptions makes newFixture serve with these HTTP options.
type httpOptions struct{ server.HTTPOptions }

// Tokens used by the fixtures.
const (
	tokAll         = "tok-all"
	tokExecutorEnv = "tok-executor-scoped"
	tokHarnessOnly = "tok-harness-only"
	tokHarnessTwo  = "tok-harness-two"
)

func newFixture(t *testing.T, kind string, envScope string, opts ...any) *fixture {
	t.Helper()
	st := openStore(t, kind)
	tokens := "# test tokens\n" + tokAll + "\n" +
		tokExecutorEnv + " roles=executor envs=" + envScope + "\n" +
		tokHarnessOnly + " roles=harness\n" +
		tokHarnessTwo + " roles=harness envs=*\n"
	clk := &clock{}
	clk.ns.Store(time.Now().UnixNano())
	var ho *server.HTTPOptions
	for _, opt := range opts {
		if f, ok := opt.(httpOptions); ok {
			ho = &f.HTTPOptions
		}
	}
	reg := registrytest.Start(t, &registrytest.Options{Store: st, Tokens: tokens, HTTP: ho,
		Hub: func(o *rendezvous.Options) {
			o.Now = clk.now
			o.Conn = &wsconn.Options{PingInterval: time.Hour}
		},
		Server: func(o *server.Options) {
			o.Now = clk.now
			for _, opt := range opts {
				if f, ok := opt.(func(*server.Options)); ok {
					f(o)
				}
			}
		}})
	return &fixture{t: t, URL: reg.URL, hub: reg.Hub(), store: st, clock: clk, http: reg.HTTP()}
}

// keyJSON returns a well-formed random public-key JSON (registry-auth.md §9).
var keyJSON = registrytest.RandomKeyJSON

// post sends a JSON body with a bearer and returns status, decoded error code and body.
func (f *fixture) post(path, token string, body any, header ...string) (int, string, []byte) {
	f.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case string:
		rd = strings.NewReader(b)
	default:
		raw, _ := json.Marshal(b)
		rd = bytes.NewReader(raw)
	}
	req, _ := http.NewRequest(http.MethodPost, f.URL+path, rd)
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		f.t.Fatalf("POST %s: %v", path, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var e api.ErrorResponse
	_ = json.Unmarshal(raw, &e)
	return resp.StatusCode, e.Error.Code, raw
}

// register registers an executor and returns the response.
func (f *fixture) register(env string, key json.RawMessage) api.RegisterResponse {
	f.t.Helper()
	st, code, raw := f.post(api.Path(env, api.RegisterSuffix), tokAll, api.RegisterRequest{SecurityProfile: api.SecurityProfile, ExecutorPublicKey: key})
	if st != 200 {
		f.t.Fatalf("register %s: got %d %s, want 200", env, st, code)
	}
	var r api.RegisterResponse
	if err := json.Unmarshal(raw, &r); err != nil {
		f.t.Fatal(err)
	}
	return r
}

// online dials the executor's rendezvous URL and returns the socket (closed in Cleanup).
func (f *fixture) online(url string) *wsconn.Conn {
	f.t.Helper()
	c, err := wsconn.Dial(context.Background(), url, nil)
	if err != nil {
		f.t.Fatalf("dialing executor rendezvous url: %v", err)
	}
	f.t.Cleanup(func() { c.Close() })
	return c
}

// waitOnline waits until the hub reports the environment online (the upgrade handler
// attaches the socket just after the 101 response).
func (f *fixture) waitOnline(env string, want bool) {
	f.t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		if _, ok := f.hub.Online(env); ok == want {
			return
		}
		if time.Now().After(deadline) {
			f.t.Fatalf("environment %s online: want %v", env, want)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// executorOnline registers env with a fresh key, attaches that registration's executor
// socket and waits until the hub reports env online; it returns the socket.
func (f *fixture) executorOnline(env string) *wsconn.Conn {
	f.t.Helper()
	c := f.online(f.register(env, keyJSON()).URL)
	f.waitOnline(env, true)
	return c
}

// connect posts connect and returns status, code and bundle.
func (f *fixture) connect(env, token string, key json.RawMessage) (int, string, api.ConnectResponse) {
	f.t.Helper()
	st, code, raw := f.post(api.Path(env, api.ConnectSuffix), token, api.ConnectRequest{HarnessPublicKey: key})
	var b api.ConnectResponse
	if st == 200 {
		if err := json.Unmarshal(raw, &b); err != nil {
			f.t.Fatal(err)
		}
	}
	return st, code, b
}

// validate posts validate and returns status, code and valid.
func (f *fixture) validate(env, regID string, key json.RawMessage, authz string) (int, string, bool) {
	f.t.Helper()
	st, code, raw := f.post(api.Path(env, api.ValidateSuffix), tokAll, api.ValidateRequest{
		ExecutorRegistrationID: regID, HarnessPublicKey: key, HarnessKeyAuthorization: authz,
	}, api.HeaderStreamID, "stream-1")
	var v api.ValidateResponse
	if st == 200 {
		_ = json.Unmarshal(raw, &v)
	}
	return st, code, v.Valid
}

// forEachStore runs fn against each store kind (storeKinds), in a subtest named by the
// kind, with a fixture scoped to a fresh environment id made from prefix (uniqueEnv).
func forEachStore(t *testing.T, prefix string, fn func(t *testing.T, f *fixture, env string)) {
	for _, kind := range storeKinds(t) {
		t.Run(kind, func(t *testing.T) {
			env := uniqueEnv(prefix)
			fn(t, newFixture(t, kind, env), env)
		})
	}
}
