package registrycmd_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/execlab/executor/cmd/executor/internal/registrycmd"
	"github.com/execlab/executor/registry/api"
	"github.com/execlab/executor/registry/rendezvous"
	"github.com/execlab/executor/relay/wsconn"
)

// TestStart_LongLivedURLRefused: with the registry's real signing key, read from its
// database file (as a local user who can read the file could), an executor URL expiring in
// 100 years is refused with 401 and a body that does not echo the signature, while the
// URL register hands out works (issue 26 finding 4). Before the bound, the forged URL
// upgraded.
func TestStart_LongLivedURLRefused(t *testing.T) {
	ctx := context.Background()
	svc, err := registrycmd.Start(ctx, registrycmd.Config{Listen: "127.0.0.1:0", DB: filepath.Join(t.TempDir(), "registry.db"),
		Tokens: mustTokens(t, "tok roles=executor envs=env-1\n")})
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close()
	body, _ := json.Marshal(api.RegisterRequest{SecurityProfile: api.SecurityProfile, ExecutorPublicKey: keyJSON()})
	req, _ := http.NewRequest(http.MethodPost, svc.URL+api.Path("env-1", api.RegisterSuffix), bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer tok")
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var reg api.RegisterResponse
	err = json.NewDecoder(resp.Body).Decode(&reg)
	resp.Body.Close()
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("register: got %d (%v)", resp.StatusCode, err)
	}
	issued, err := url.Parse(reg.URL)
	if err != nil {
		t.Fatal(err)
	}
	q := issued.Query()
	gen, _ := strconv.ParseInt(q.Get("g"), 10, 64)
	exp, _ := strconv.ParseInt(q.Get("e"), 10, 64)
	kid, _ := strconv.ParseInt(q.Get("k"), 10, 64)

	// The forger's signer holds the keys stored in the database.
	keys, err := svc.Store.SigningKeys(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	forger := rendezvous.NewRandomSigner()
	if err := forger.SetKeys(keys, kid); err != nil {
		t.Fatal(err)
	}
	base := "ws://" + issued.Host
	claims := rendezvous.Claims{Role: rendezvous.RoleEnvironment, EnvironmentID: "env-1", Generation: gen, Expires: time.Unix(exp, 0), Nonce: q.Get("n")}
	if got := forger.URL(base, claims); got != reg.URL {
		t.Fatalf("the stored key does not reproduce the issued url:\n got %s\nwant %s", got, reg.URL)
	}
	claims.Expires = time.Now().Add(100 * 365 * 24 * time.Hour)
	claims.Nonce = ""
	forged := forger.URL(base, claims)
	sig := mustQuery(t, forged).Get("sig")

	// The refusal comes before the upgrade: a plain GET shows status and body.
	resp, err = http.Get(strings.Replace(forged, "ws://", "http://", 1))
	if err != nil {
		t.Fatal(err)
	}
	msg, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized || strings.Contains(string(msg), sig) {
		t.Errorf("100-year url: got %d %s, want 401 without the signature", resp.StatusCode, msg)
	}
	if c, err := wsconn.Dial(ctx, forged, nil); err == nil {
		c.Close()
		t.Fatalf("100-year url upgraded")
	} else if de := (*wsconn.DialError)(nil); !errors.As(err, &de) || de.StatusCode != http.StatusUnauthorized {
		t.Errorf("100-year url: got %v, want HTTP 401", err)
	}
	c, err := wsconn.Dial(ctx, reg.URL, nil)
	if err != nil {
		t.Fatalf("the issued url: %v", err)
	}
	c.Close()
}

func mustQuery(t *testing.T, raw string) url.Values {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u.Query()
}
