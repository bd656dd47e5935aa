package client_test

import (
	"context"
	"crypto"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/execlab/executor/registry/client"
)

func TestCheckAPIKeyHost(t *testing.T) {
	tests := []struct {
		url string
		ok  bool
	}{
		{"http://127.0.0.1:8080", true}, {"http://localhost:1", true}, {"http://[::1]:1/x", true},
		{"http://127.9.9.9", true}, {"https://openai.com", true}, {"https://API.OpenAI.org/x", true},
		{"https://chatgpt.openai.com", true}, {"http://openai.com", false},
		{"https://service.openai.org.evil.example", false}, {"http://10.0.0.1", false},
		{"https://evilopenai.com", false}, {"not a url", false},
	}
	for _, tt := range tests {
		if got := client.CheckAPIKeyHost(tt.url) == nil; got != tt.ok {
			t.Errorf("CheckAPIKeyHost(%q): got %v, want %v", tt.url, got, tt.ok)
		}
	}
}

func jwt(t *testing.T, claims map[string]any) string {
	t.Helper()
	b, _ := json.Marshal(claims)
	return "eyJhbGciOiJub25lIn0." + base64.RawURLEncoding.EncodeToString(b) + ".sig"
}

func TestChatGPTTokenStdinRules(t *testing.T) {
	if client.CheckChatGPTTokenURL("http://127.0.0.1:1") == nil || client.CheckChatGPTTokenURL("https://u@h") == nil ||
		client.CheckChatGPTTokenURL("https://h/#f") == nil || client.CheckChatGPTTokenURL("https://h/x") != nil {
		t.Error("CheckChatGPTTokenURL: want https without userinfo or fragment only")
	}
	tok := jwt(t, map[string]any{"https://api.openai.com/auth": map[string]any{"chatgpt_account_id": "acct-1"}})
	if _, err := client.NewChatGPTTokenChecked(tok, "acct-2"); err != client.ErrAccountMismatch {
		t.Errorf("mismatched account: got %v, want ErrAccountMismatch", err)
	}
	a, err := client.NewChatGPTTokenChecked(tok, "")
	if err != nil {
		t.Fatal(err)
	}
	h := http.Header{}
	a.Apply(context.Background(), h)
	if h.Get("Chatgpt-Account-Id") != "acct-1" || h.Get("Authorization") != "Bearer "+tok {
		t.Errorf("headers: %v", h)
	}
	if s := fmt.Sprintf("%v %+v %#v", a, a, a); strings.Contains(s, tok) {
		t.Errorf("formatting leaks the token: %s", s)
	}
}

func TestAuthFile_ProactiveRefreshAndForced(t *testing.T) {
	expired := jwt(t, map[string]any{"exp": time.Now().Add(-time.Hour).Unix()})
	fresh := jwt(t, map[string]any{"exp": time.Now().Add(time.Hour).Unix()})
	fresh2 := jwt(t, map[string]any{"exp": time.Now().Add(2 * time.Hour).Unix(), "n": 2})
	calls := 0
	tokenSrv, reqs := server(t, func(w http.ResponseWriter, r *http.Request) {
		calls++
		w.Header().Set("Content-Type", "application/json")
		access := fresh
		if calls > 1 {
			access = fresh2
		}
		fmt.Fprintf(w, `{"access_token":%q,"refresh_token":"rt-2","id_token":"id-2","token_type":"Bearer","expires_in":3600}`, access)
	})
	dir := t.TempDir()
	path := filepath.Join(dir, "auth.json")
	os.WriteFile(path, []byte(`{"auth_mode":"chatgpt","OPENAI_API_KEY":null,"tokens":{"id_token":"id-1","access_token":"`+expired+`","refresh_token":"rt-1","account_id":"acct-9"},"last_refresh":"2020-01-01T00:00:00Z","keep":"me"}`), 0o644)
	a, err := client.LoadAuthFile(path, &client.AuthFileOptions{TokenURL: tokenSrv.URL + "/oauth/token"})
	if err != nil {
		t.Fatal(err)
	}
	h := http.Header{}
	if err := a.Apply(context.Background(), h); err != nil {
		t.Fatal(err)
	}
	if h.Get("Authorization") != "Bearer "+fresh || h.Get("Chatgpt-Account-Id") != "acct-9" {
		t.Errorf("after proactive refresh: authorization fresh=%v account %q", h.Get("Authorization") == "Bearer "+fresh, h.Get("Chatgpt-Account-Id"))
	}
	forms := bodies(reqs())
	if len(forms) != 1 || !strings.Contains(forms[0], "client_id=app_EMoamEEZ73f0CkXaXp7hrann") ||
		!strings.Contains(forms[0], "grant_type=refresh_token") || !strings.Contains(forms[0], "refresh_token=rt-1") {
		t.Errorf("refresh request: %v", forms)
	}
	st, _ := os.Stat(path)
	if st.Mode().Perm() != 0o600 {
		t.Errorf("auth.json mode: got %v, want 0600", st.Mode().Perm())
	}
	var doc struct {
		Keep   string            `json:"keep"`
		Tokens map[string]string `json:"tokens"`
		Last   string            `json:"last_refresh"`
	}
	b, _ := os.ReadFile(path)
	json.Unmarshal(b, &doc)
	if doc.Keep != "me" || doc.Tokens["access_token"] != fresh || doc.Tokens["refresh_token"] != "rt-2" ||
		doc.Tokens["id_token"] != "id-2" || doc.Tokens["account_id"] != "acct-9" || doc.Last == "2020-01-01T00:00:00Z" {
		t.Errorf("rewritten auth.json: %s", b)
	}
	// A registry 401 forces one refresh.
	if err := a.ForceRefresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	h = http.Header{}
	a.Apply(context.Background(), h)
	forms = bodies(reqs())
	if h.Get("Authorization") != "Bearer "+fresh2 || len(forms) != 2 || !strings.Contains(forms[1], "refresh_token=rt-2") {
		t.Errorf("forced refresh: %d refreshes, new token used %v", len(forms), h.Get("Authorization") == "Bearer "+fresh2)
	}
}

func TestAgentIdentity_AssertionFormat(t *testing.T) {
	rsaKey, _ := rsa.GenerateKey(rand.Reader, 2048)
	edPub, edPriv, _ := ed25519.GenerateKey(rand.Reader)
	pkcs8, _ := x509.MarshalPKCS8PrivateKey(edPriv)
	srv, reqs := server(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/backend-api/wham/agent-identities/jwks":
			fmt.Fprintf(w, `{"keys":[{"kty":"RSA","kid":"k1","n":%q,"e":%q}]}`,
				base64.RawURLEncoding.EncodeToString(rsaKey.N.Bytes()),
				base64.RawURLEncoding.EncodeToString(big.NewInt(int64(rsaKey.E)).Bytes()))
		case "/accounts/v1/agent/rt-1/task/register":
			io.WriteString(w, `{"task_id":"task-7"}`)
		default:
			http.NotFound(w, r)
		}
	})
	hdr := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"RS256","kid":"k1","typ":"JWT"}`))
	cl, _ := json.Marshal(map[string]any{"aud": "codex-app-server", "iss": "https://chatgpt.com/codex-backend/agent-identity",
		"exp": time.Now().Add(time.Hour).Unix(), "agent_runtime_id": "rt-1", "account_id": "acct-3",
		"agent_private_key": base64.StdEncoding.EncodeToString(pkcs8)})
	signing := hdr + "." + base64.RawURLEncoding.EncodeToString(cl)
	d := sha256.Sum256([]byte(signing))
	sig, _ := rsa.SignPKCS1v15(rand.Reader, rsaKey, crypto.SHA256, d[:])
	token := signing + "." + base64.RawURLEncoding.EncodeToString(sig)

	a, err := client.NewAgentIdentity(token, &client.AgentIdentityOptions{
		ChatGPTBaseURL: srv.URL + "/backend-api/", AuthAPIBaseURL: srv.URL + "/accounts"})
	if err != nil {
		t.Fatal(err)
	}
	h := http.Header{}
	if err := a.Apply(context.Background(), h); err != nil {
		t.Fatalf("Apply: %v", err)
	}
	var tb struct{ Timestamp, Signature string }
	for _, r := range reqs() {
		if strings.HasSuffix(r.path, "/task/register") {
			json.Unmarshal([]byte(r.body), &tb)
		}
	}
	ts, _ := base64.StdEncoding.DecodeString(tb.Signature)
	if !ed25519.Verify(edPub, []byte("rt-1:"+tb.Timestamp), ts) {
		t.Errorf("task registration signature does not verify")
	}
	authz := h.Get("Authorization")
	env, ok := strings.CutPrefix(authz, "AgentAssertion ")
	if !ok || strings.ContainsAny(env, "=+/") {
		t.Fatalf("authorization %q: want AgentAssertion <base64url without padding>", authz)
	}
	raw, _ := base64.RawURLEncoding.DecodeString(env)
	if !strings.HasPrefix(string(raw), `{"agent_runtime_id":"rt-1","signature":`) || !strings.Contains(string(raw), `"task_id":"task-7","timestamp":`) {
		t.Errorf("assertion JSON not in sorted key order: %s", raw)
	}
	var as struct{ Signature, Timestamp string }
	json.Unmarshal(raw, &as)
	s, _ := base64.StdEncoding.DecodeString(as.Signature)
	if !ed25519.Verify(edPub, []byte("rt-1:task-7:"+as.Timestamp), s) || !strings.HasSuffix(as.Timestamp, "Z") {
		t.Errorf("assertion signature does not verify or timestamp %q not RFC 3339 Z", as.Timestamp)
	}
	if h.Get("Chatgpt-Account-Id") != "acct-3" {
		t.Errorf("account header: %q", h.Get("Chatgpt-Account-Id"))
	}
	// Tampered token (claims changed) must fail verification.
	bad := hdr + "." + base64.RawURLEncoding.EncodeToString([]byte(`{"aud":"codex-app-server"}`)) + "." + base64.RawURLEncoding.EncodeToString(sig)
	b2, _ := client.NewAgentIdentity(bad, &client.AgentIdentityOptions{ChatGPTBaseURL: srv.URL + "/backend-api/", AuthAPIBaseURL: srv.URL + "/accounts"})
	if err := b2.Apply(context.Background(), http.Header{}); err == nil {
		t.Error("tampered token accepted")
	}
}

func bodies(rs []recorded) []string {
	var out []string
	for _, r := range rs {
		out = append(out, r.body)
	}
	return out
}
