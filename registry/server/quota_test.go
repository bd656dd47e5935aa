package server_test

import (
	"context"
	"testing"

	"github.com/execlab/executor/registry/api"
	"github.com/execlab/executor/registry/rendezvous"
	"github.com/execlab/executor/registry/server"
	"github.com/execlab/executor/relay/frame"
	"github.com/execlab/executor/relay/wsconn"
)

// TestConnect_PerTokenQuota: one harness token filling its outstanding authorizations gets
// 429 rate_limited, and another token still gets bundles (security issue 13, finding 3:
// 1,030 connects with one token used to lock every other harness out for the TTL).
func TestConnect_PerTokenQuota(t *testing.T) {
	forEachStore(t, "quota", func(t *testing.T, f *fixture, env string) {
		f.executorOnline(env)
		hk := keyJSON()
		ok := 0
		for i := 0; i < server.MaxLiveAuthorizations+8; i++ {
			st, code, _ := f.connect(env, tokHarnessOnly, hk)
			if st == 429 {
				if code != api.CodeRateLimited {
					t.Fatalf("connect %d: got 429 %s, want rate_limited", i, code)
				}
				break
			}
			if st != 200 {
				t.Fatalf("connect %d: got %d %s, want 200", i, st, code)
			}
			ok++
		}
		if ok != server.MaxLiveAuthorizationsPerToken {
			t.Errorf("bundles for one token: got %d, want %d", ok, server.MaxLiveAuthorizationsPerToken)
		}
		if st, code, _ := f.connect(env, tokHarnessTwo, keyJSON()); st != 200 {
			t.Errorf("connect with another token after the first filled its quota: got %d %s, want 200", st, code)
		}
		f.clock.advance(server.AuthorizationTTL)
		if st, code, _ := f.connect(env, tokHarnessOnly, hk); st != 200 {
			t.Errorf("connect after the token's bundles expired: got %d %s, want 200", st, code)
		}
	})
}

// TestConnect_BundleURLOpensOneSocket: the rendezvous URL of a connect bundle opens one
// harness socket; a second upgrade of it is refused with 401.
func TestConnect_BundleURLOpensOneSocket(t *testing.T) {
	env := uniqueEnv("once")
	f := newFixture(t, "sqlite", env)
	f.executorOnline(env)
	_, _, b := f.connect(env, tokHarnessOnly, keyJSON())
	c, err := wsconn.Dial(context.Background(), b.URL, nil)
	if err != nil {
		t.Fatalf("first upgrade of the bundle url: %v", err)
	}
	defer c.Close()
	if _, err := wsconn.Dial(context.Background(), b.URL, nil); wsStatus(err) != 401 {
		t.Errorf("second upgrade of the bundle url: got %v, want HTTP 401", err)
	}
}

// TestConnect_PausedTokenRefused: once a token's harness streams failed
// rendezvous.HarnessFailureBudget times (the executor reset them before any data), connect
// answers that token 429 rate_limited, while another token still gets a bundle.
func TestConnect_PausedTokenRefused(t *testing.T) {
	env := uniqueEnv("paused")
	f := newFixture(t, "sqlite", env)
	ex := f.executorOnline(env)
	for i := range rendezvous.HarnessFailureBudget {
		st, code, b := f.connect(env, tokHarnessOnly, keyJSON())
		if st != 200 {
			t.Fatalf("connect %d: got %d %s, want 200", i, st, code)
		}
		h, err := wsconn.Dial(context.Background(), b.URL, nil)
		if err != nil {
			t.Fatal(err)
		}
		stream := "s-" + string(rune('a'+i))
		hs, _ := frame.Encode(nil, &frame.Frame{Version: frame.Version, StreamID: stream, Body: &frame.Handshake{Payload: []byte{1}}})
		if err := h.WriteFrame(context.Background(), hs); err != nil {
			t.Fatal(err)
		}
		if _, err := ex.ReadFrame(context.Background()); err != nil {
			t.Fatal(err)
		}
		reset, _ := frame.Encode(nil, &frame.Frame{Version: frame.Version, StreamID: stream, Body: &frame.Reset{Reason: frame.ResetReasonProtocolError}})
		if err := ex.WriteFrame(context.Background(), reset); err != nil {
			t.Fatal(err)
		}
		if _, err := h.ReadFrame(context.Background()); err != nil {
			t.Fatal(err)
		}
		h.Close()
	}
	if st, code, _ := f.connect(env, tokHarnessOnly, keyJSON()); st != 429 || code != api.CodeRateLimited {
		t.Errorf("connect with a paused token: got %d %s, want 429 rate_limited", st, code)
	}
	if st, code, _ := f.connect(env, tokHarnessTwo, keyJSON()); st != 200 {
		t.Errorf("connect with another token: got %d %s, want 200", st, code)
	}
}
