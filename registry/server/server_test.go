package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/execlab/executor/registry/api"
	"github.com/execlab/executor/registry/server"
	"github.com/execlab/executor/relay/wsconn"
)

func TestRegister_ResponseAndGenerations(t *testing.T) {
	forEachStore(t, "reg", func(t *testing.T, f *fixture, env string) {
		key := keyJSON()
		r1 := f.register(env, key)
		if r1.EnvironmentID != env || r1.SecurityProfile != api.SecurityProfile || api.ValidateRegistrationID(r1.ExecutorRegistrationID) != nil {
			t.Errorf("register response: got %+v, want env %s, profile %s, a valid registration id", r1, env, api.SecurityProfile)
		}
		if !strings.HasPrefix(r1.URL, "ws://") || !strings.Contains(r1.URL, "sig=") {
			t.Errorf("register url: got a url without ws:// or sig=")
		}
		r2 := f.register(env, key)
		if r2.ExecutorRegistrationID == r1.ExecutorRegistrationID {
			t.Errorf("second register reused registration id")
		}
		reg, err := f.store.Registration(context.Background(), env)
		if err != nil || reg.Generation != 2 || reg.RegistrationID != r2.ExecutorRegistrationID {
			t.Errorf("stored registration: got gen %d id match %v (err %v), want gen 2 and the newest id", reg.Generation, reg.RegistrationID == r2.ExecutorRegistrationID, err)
		}
	})
}

func TestAPI_ErrorsAndTokenScoping(t *testing.T) {
	for _, kind := range storeKinds(t) {
		t.Run(kind, func(t *testing.T) {
			env := uniqueEnv("scope")
			other := uniqueEnv("other")
			f := newFixture(t, kind, env)
			good := api.RegisterRequest{SecurityProfile: api.SecurityProfile, ExecutorPublicKey: keyJSON()}
			regPath := api.Path(env, api.RegisterSuffix)
			tests := []struct {
				name   string
				path   string
				token  string
				body   any
				status int
				code   string
			}{
				{"no token", regPath, "", good, 401, api.CodeUnauthorized},
				{"unknown token", regPath, "nope", good, 401, api.CodeUnauthorized},
				{"harness-only token registers", regPath, tokHarnessOnly, good, 403, api.CodeForbidden},
				{"scoped token other env", api.Path(other, api.RegisterSuffix), tokExecutorEnv, good, 403, api.CodeForbidden},
				{"scoped token own env", regPath, tokExecutorEnv, good, 200, ""},
				{"executor token connects", api.Path(env, api.ConnectSuffix), tokExecutorEnv, api.ConnectRequest{HarnessPublicKey: keyJSON()}, 403, api.CodeForbidden},
				{"unknown member", regPath, tokAll, `{"security_profile":"noise_hybrid_ik_v1","executor_public_key":` + string(keyJSON()) + `,"name":"x"}`, 400, api.CodeInvalidRequest},
				{"wrong profile", regPath, tokAll, api.RegisterRequest{SecurityProfile: "plain", ExecutorPublicKey: keyJSON()}, 400, api.CodeInvalidRequest},
				{"bad key", regPath, tokAll, api.RegisterRequest{SecurityProfile: api.SecurityProfile, ExecutorPublicKey: json.RawMessage(`{"suite":"x"}`)}, 400, api.CodeInvalidRequest},
				{"not json", regPath, tokAll, "garbage", 400, api.CodeInvalidRequest},
				{"oversized body", regPath, tokAll, strings.Repeat(" ", api.MaxRequestBody+1) + "{}", 400, api.CodeInvalidRequest},
				{"bad env id", "/cloud/environment/bad.id/register", tokAll, good, 400, api.CodeInvalidRequest},
				{"unknown suffix", api.Path(env, "nope"), tokAll, good, 404, api.CodeNotFound},
				{"unknown path", "/other", tokAll, good, 404, api.CodeNotFound},
				{"connect offline", api.Path(uniqueEnv("off"), api.ConnectSuffix), tokAll, api.ConnectRequest{HarnessPublicKey: keyJSON()}, 409, api.CodeEnvironmentOffline},
				{"validate unregistered", api.Path(uniqueEnv("unreg"), api.ValidateSuffix), tokAll,
					api.ValidateRequest{ExecutorRegistrationID: "reg_x", HarnessPublicKey: keyJSON(), HarnessKeyAuthorization: "a"}, 409, api.CodeRegistrationFenced},
			}
			for _, tt := range tests {
				st, code, _ := f.post(tt.path, tt.token, tt.body)
				if st != tt.status || code != tt.code {
					t.Errorf("%s: got %d %q, want %d %q", tt.name, st, code, tt.status, tt.code)
				}
			}
			req, _ := http.NewRequest(http.MethodGet, f.URL+regPath, nil)
			req.Header.Set("Authorization", "Bearer "+tokAll)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != 405 {
				t.Errorf("GET register: got %d, want 405", resp.StatusCode)
			}
		})
	}
}

func TestConnectValidate_SingleUseAndBinding(t *testing.T) {
	forEachStore(t, "conn", func(t *testing.T, f *fixture, env string) {
		execKey := keyJSON()
		reg := f.register(env, execKey)
		hk := keyJSON()
		if st, code, _ := f.connect(env, tokAll, hk); st != 409 || code != api.CodeEnvironmentOffline {
			t.Fatalf("connect before the executor socket: got %d %s, want 409 environment_offline", st, code)
		}
		f.online(reg.URL)
		f.waitOnline(env, true)
		st, code, b := f.connect(env, tokHarnessOnly, hk)
		if st != 200 {
			t.Fatalf("connect: got %d %s, want 200", st, code)
		}
		wantKey, _ := api.CanonicalPublicKey(execKey)
		if b.EnvironmentID != env || b.ExecutorRegistrationID != reg.ExecutorRegistrationID || !bytes.Equal(b.ExecutorPublicKey, wantKey) ||
			b.HarnessKeyAuthorization == "" || !strings.Contains(b.URL, "/harness/") || b.SecurityProfile != api.SecurityProfile {
			t.Fatalf("connect bundle: got %s, want env, registration, executor key, authorization and a harness url", b)
		}
		// Wrong key, then the right one once, then a replay.
		if _, _, ok := f.validate(env, reg.ExecutorRegistrationID, keyJSON(), b.HarnessKeyAuthorization); ok {
			t.Errorf("validate with another harness key: got valid, want invalid")
		}
		if _, _, ok := f.validate(env, reg.ExecutorRegistrationID, hk, "hka_forged"); ok {
			t.Errorf("validate with a forged authorization: got valid, want invalid")
		}
		if st, code, ok := f.validate(env, reg.ExecutorRegistrationID, hk, b.HarnessKeyAuthorization); st != 200 || !ok {
			t.Errorf("validate: got %d %s valid=%v, want 200 valid", st, code, ok)
		}
		if _, _, ok := f.validate(env, reg.ExecutorRegistrationID, hk, b.HarnessKeyAuthorization); ok {
			t.Errorf("replayed authorization: got valid, want invalid (single use)")
		}
		// Expiry.
		_, _, b2 := f.connect(env, tokAll, hk)
		f.clock.advance(server.AuthorizationTTL + time.Second)
		if _, _, ok := f.validate(env, reg.ExecutorRegistrationID, hk, b2.HarnessKeyAuthorization); ok {
			t.Errorf("expired authorization: got valid, want invalid")
		}
	})
}

func TestRegister_FencesOldRegistration(t *testing.T) {
	forEachStore(t, "fence", func(t *testing.T, f *fixture, env string) {
		old := f.register(env, keyJSON())
		oldSock := f.online(old.URL)
		f.waitOnline(env, true)
		oldEnded := make(chan error, 1)
		go func() { _, err := oldSock.ReadFrame(context.Background()); oldEnded <- err }()
		hk := keyJSON()
		_, _, bundle := f.connect(env, tokAll, hk)
		cur := f.register(env, keyJSON())
		// The old executor socket is closed, its URL refused, its validations fenced.
		select {
		case <-oldEnded:
		case <-time.After(5 * time.Second):
			t.Fatalf("old executor socket still open after a newer registration")
		}
		if _, err := wsconn.Dial(context.Background(), old.URL, nil); wsStatus(err) != 401 {
			t.Errorf("dialing a fenced executor url: got %v, want HTTP 401", err)
		}
		if st, code, _ := f.validate(env, old.ExecutorRegistrationID, hk, bundle.HarnessKeyAuthorization); st != 409 || code != api.CodeRegistrationFenced {
			t.Errorf("validate by the fenced registration: got %d %s, want 409 registration_fenced", st, code)
		}
		// An authorization issued for the old registration does not work for the new one.
		if _, _, ok := f.validate(env, cur.ExecutorRegistrationID, hk, bundle.HarnessKeyAuthorization); ok {
			t.Errorf("authorization of the old registration accepted for the new one")
		}
		f.online(cur.URL)
		f.waitOnline(env, true)
		if st, _, _ := f.connect(env, tokAll, hk); st != 200 {
			t.Errorf("connect to the new registration: got %d, want 200", st)
		}
	})
}

func TestRendezvous_SignatureChecks(t *testing.T) {
	env := uniqueEnv("sig")
	f := newFixture(t, "sqlite", env)
	r := f.register(env, keyJSON())
	forged := strings.Replace(r.URL, "sig=", "sig=AAAA", 1)
	otherEnv := strings.Replace(r.URL, "/environment/"+env, "/environment/"+env+"x", 1)
	asHarness := strings.Replace(r.URL, "/environment/", "/harness/", 1)
	for name, u := range map[string]string{"forged": forged, "other env": otherEnv, "role swapped": asHarness} {
		if _, err := wsconn.Dial(context.Background(), u, nil); wsStatus(err) != 401 {
			t.Errorf("%s url: got %v, want HTTP 401", name, err)
		}
	}
	f.clock.advance(25 * time.Hour)
	if _, err := wsconn.Dial(context.Background(), r.URL, nil); wsStatus(err) != 401 {
		t.Errorf("expired url: got %v, want HTTP 401", err)
	}
}

// TestConnect_TenThousandCalls: 10,000 connect calls; the first MaxLiveAuthorizations get
// bundles, the rest 429 rate_limited, and the server keeps answering.
func TestConnect_TenThousandCalls(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: 10,000 HTTP calls")
	}
	env := uniqueEnv("many")
	// One token here: lift its own bound to the environment's to exercise the latter
	// (TestConnect_PerTokenQuota covers the per-token bound).
	f := newFixture(t, "sqlite", env, func(o *server.Options) { o.MaxLiveAuthorizationsPerToken = server.MaxLiveAuthorizations })
	f.executorOnline(env)
	hk := keyJSON()
	body, _ := json.Marshal(api.ConnectRequest{HarnessPublicKey: hk})
	var ok, limited, other atomic.Int64
	var wg sync.WaitGroup
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 8}}
	defer client.CloseIdleConnections()
	const calls, workers = 10000, 8
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < calls; i += workers {
				req, _ := http.NewRequest(http.MethodPost, f.URL+api.Path(env, api.ConnectSuffix), bytes.NewReader(body))
				req.Header.Set("Authorization", "Bearer "+tokAll)
				resp, err := client.Do(req)
				if err != nil {
					other.Add(1)
					continue
				}
				resp.Body.Close()
				switch resp.StatusCode {
				case 200:
					ok.Add(1)
				case 429:
					limited.Add(1)
				default:
					other.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	if ok.Load() != server.MaxLiveAuthorizations || limited.Load() != calls-server.MaxLiveAuthorizations || other.Load() != 0 {
		t.Errorf("10,000 connects: got %d ok, %d rate-limited, %d other; want %d, %d, 0",
			ok.Load(), limited.Load(), other.Load(), server.MaxLiveAuthorizations, calls-server.MaxLiveAuthorizations)
	}
	f.clock.advance(server.AuthorizationTTL + server.PruneInterval)
	if st, _, _ := f.connect(env, tokAll, hk); st != 200 {
		t.Errorf("connect after the outstanding bundles expired: got %d, want 200", st)
	}
}

func TestTokens_Parse(t *testing.T) {
	tests := []struct {
		in string
		ok bool
	}{
		{"tok", true},
		{"# only a comment\n", false},
		{"tok roles=executor envs=a,b", true},
		{"tok roles=admin", false},
		{"tok envs=", false},
		{"tok color=red", false},
		{"sha256:" + strings.Repeat("ab", 32) + " roles=harness", true},
		{"sha256:abc", false},
	}
	for _, tt := range tests {
		_, err := server.ParseTokens(strings.NewReader(tt.in))
		if (err == nil) != tt.ok {
			t.Errorf("ParseTokens(%q): got err %v, want ok=%v", tt.in, err, tt.ok)
		}
		if err != nil && strings.Contains(err.Error(), "tok") && !strings.Contains(err.Error(), "token") {
			t.Errorf("ParseTokens error echoes the line: %v", err)
		}
	}
}

func wsStatus(err error) int {
	if de, ok := err.(*wsconn.DialError); ok {
		return de.StatusCode
	}
	return 0
}
