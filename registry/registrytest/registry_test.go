package registrytest_test

import (
	"context"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/execlab/executor/registry/registrytest"
)

// TestRegistry_KillRestart: the registry answers on its URL, stops answering after Kill and
// answers again on the same address after Restart, with the same token file.
func TestRegistry_KillRestart(t *testing.T) {
	r := registrytest.Start(t, nil)
	if !strings.HasPrefix(r.URL, "http://127.0.0.1:") || r.URL != "http://"+r.Addr {
		t.Fatalf("URL %q, Addr %q: want http://127.0.0.1:P for both", r.URL, r.Addr)
	}
	if b, err := os.ReadFile(r.TokenFile); err != nil || string(b) != r.Token+"\n" {
		t.Fatalf("token file %q (%v), want the token line", b, err)
	}
	ready := func() bool {
		resp, err := http.Get(r.URL + "/readyz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}
	if !ready() {
		t.Fatal("/readyz not OK on a started registry")
	}
	r.Kill()
	http.DefaultClient.CloseIdleConnections()
	if ready() || r.Hub() != nil || r.Online("env") {
		t.Fatal("the registry still answers after Kill")
	}
	r.Restart()
	if !ready() || r.Hub() == nil {
		t.Fatal("/readyz not OK after Restart")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	r.WaitOnline(ctx, t, "env-none", false)
}

// TestRegistry_PublicURLAndTokens: Options.PublicURL and Options.Tokens are used as given.
func TestRegistry_PublicURLAndTokens(t *testing.T) {
	r := registrytest.Start(t, &registrytest.Options{
		PublicURL: func(addr string) string { return "http://front.invalid/" + addr },
		Tokens:    "tok-a roles=harness\n",
	})
	if want := "http://front.invalid/" + r.Addr; r.URL != want {
		t.Errorf("URL %q, want %q", r.URL, want)
	}
	if b, _ := os.ReadFile(r.TokenFile); string(b) != "tok-a roles=harness\n" {
		t.Errorf("token file %q, want the given tokens", b)
	}
}
