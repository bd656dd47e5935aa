package client

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/big"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// Agent Identity constants (spec/registry-auth.md §11.5; reference).
const (
	DefaultChatGPTBaseURL = "https://chatgpt.com/backend-api/"
	DefaultAuthAPIBaseURL = "https://auth.openai.com/api/accounts"
	agentAudience         = "codex-app-server"
	agentIssuer           = "https://chatgpt.com/codex-backend/agent-identity"
	jwksTimeout           = 10 * time.Second
	taskRegisterTimeout   = 30 * time.Second
	maxJWKSBody           = 256 << 10
)

// ErrAgentIdentity wraps every Agent Identity setup failure; texts never include the token.
var ErrAgentIdentity = errors.New("Agent Identity authentication is unavailable")

// AgentIdentityOptions configures an AgentIdentity. Nil means defaults.
type AgentIdentityOptions struct {
	// ChatGPTBaseURL locates the JWKS. Default DefaultChatGPTBaseURL.
	ChatGPTBaseURL string
	// AuthAPIBaseURL is where the task is registered. Default DefaultAuthAPIBaseURL.
	AuthAPIBaseURL string
	// HTTPClient fetches the JWKS and registers the task. Nil means a no-redirect client.
	HTTPClient *http.Client
	// Now is the clock. Nil means time.Now.
	Now func() time.Time
}

// AgentIdentity authenticates with an Agent Identity JWT (CODEX_ACCESS_TOKEN): on first use it
// verifies the JWT (RS256 against the JWKS; kid, aud, iss, exp), registers one task for the
// process, and then signs a fresh `authorization: AgentAssertion …` for every request. It is
// safe for concurrent use.
type AgentIdentity struct {
	token string
	opts  AgentIdentityOptions

	// mu serialises the one-time setup and guards the fields below.
	mu        sync.Mutex
	ready     bool
	runtimeID string
	key       ed25519.PrivateKey
	accountID string
	fedramp   bool
	taskID    string
}

// NewAgentIdentity keeps the token; nothing is fetched until the first Apply.
func NewAgentIdentity(token string, opts *AgentIdentityOptions) (*AgentIdentity, error) {
	token = strings.TrimSpace(token)
	if token == "" {
		return nil, fmt.Errorf("%w: empty CODEX_ACCESS_TOKEN", ErrAgentIdentity)
	}
	a := &AgentIdentity{token: token}
	if opts != nil {
		a.opts = *opts
	}
	if a.opts.ChatGPTBaseURL == "" {
		a.opts.ChatGPTBaseURL = DefaultChatGPTBaseURL
	}
	if a.opts.AuthAPIBaseURL == "" {
		a.opts.AuthAPIBaseURL = DefaultAuthAPIBaseURL
	}
	if a.opts.HTTPClient == nil {
		a.opts.HTTPClient = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	}
	if a.opts.Now == nil {
		a.opts.Now = time.Now
	}
	return a, nil
}

// Apply sets authorization: AgentAssertion <base64url JSON>, chatgpt-account-id and, for
// FedRAMP accounts, x-openai-fedramp.
func (a *AgentIdentity) Apply(ctx context.Context, h http.Header) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.ready {
		if err := a.setupLocked(ctx); err != nil {
			return err
		}
		a.ready = true
	}
	h.Set("Authorization", "AgentAssertion "+a.assertionLocked())
	if a.accountID != "" {
		h.Set(headerAccountID, a.accountID)
	}
	if a.fedramp {
		h.Set(headerFedRAMP, "true")
	}
	return nil
}

func (a *AgentIdentity) assertionLocked() string {
	ts := a.opts.Now().UTC().Truncate(time.Second).Format("2006-01-02T15:04:05Z")
	sig := ed25519.Sign(a.key, []byte(a.runtimeID+":"+a.taskID+":"+ts))
	// Members in sorted order (the reference serialises a sorted map).
	b, _ := json.Marshal(struct {
		AgentRuntimeID string `json:"agent_runtime_id"`
		Signature      string `json:"signature"`
		TaskID         string `json:"task_id"`
		Timestamp      string `json:"timestamp"`
	}{a.runtimeID, base64.StdEncoding.EncodeToString(sig), a.taskID, ts})
	return base64.RawURLEncoding.EncodeToString(b)
}

type agentClaims struct {
	Aud              json.RawMessage `json:"aud"`
	Iss              string          `json:"iss"`
	Exp              *float64        `json:"exp"`
	AgentRuntimeID   string          `json:"agent_runtime_id"`
	AgentPrivateKey  string          `json:"agent_private_key"`
	AccountID        string          `json:"account_id"`
	AccountIsFedRAMP bool            `json:"chatgpt_account_is_fedramp"`
}

func (a *AgentIdentity) setupLocked(ctx context.Context) error {
	claims, err := a.verify(ctx)
	if err != nil {
		return err
	}
	der, err := base64.StdEncoding.DecodeString(claims.AgentPrivateKey)
	if err != nil {
		return fmt.Errorf("%w: agent_private_key is not base64", ErrAgentIdentity)
	}
	k, err := x509.ParsePKCS8PrivateKey(der)
	key, ok := k.(ed25519.PrivateKey)
	if err != nil || !ok {
		return fmt.Errorf("%w: agent_private_key is not a PKCS#8 Ed25519 key", ErrAgentIdentity)
	}
	a.runtimeID, a.key, a.accountID, a.fedramp = claims.AgentRuntimeID, key, claims.AccountID, claims.AccountIsFedRAMP
	return a.registerTask(ctx)
}

// verify checks the JWT signature (RS256, kid from the JWKS) and its aud, iss and exp.
func (a *AgentIdentity) verify(ctx context.Context) (*agentClaims, error) {
	parts := strings.Split(a.token, ".")
	if len(parts) != 3 {
		return nil, fmt.Errorf("%w: CODEX_ACCESS_TOKEN is not a JWT", ErrAgentIdentity)
	}
	var hdr struct {
		Alg string `json:"alg"`
		Kid string `json:"kid"`
	}
	if !decodeSegment(parts[0], &hdr) || hdr.Alg != "RS256" || hdr.Kid == "" {
		return nil, fmt.Errorf("%w: token header must be RS256 with a kid", ErrAgentIdentity)
	}
	pub, err := a.fetchKey(ctx, hdr.Kid)
	if err != nil {
		return nil, err
	}
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil {
		return nil, fmt.Errorf("%w: bad token signature encoding", ErrAgentIdentity)
	}
	digest := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if rsa.VerifyPKCS1v15(pub, crypto.SHA256, digest[:], sig) != nil {
		return nil, fmt.Errorf("%w: token signature does not verify", ErrAgentIdentity)
	}
	var c agentClaims
	if !decodeSegment(parts[1], &c) {
		return nil, fmt.Errorf("%w: bad token claims", ErrAgentIdentity)
	}
	switch {
	case !audienceHas(c.Aud, agentAudience):
		return nil, fmt.Errorf("%w: token audience", ErrAgentIdentity)
	case c.Iss != agentIssuer:
		return nil, fmt.Errorf("%w: token issuer", ErrAgentIdentity)
	case c.Exp == nil || !a.opts.Now().Before(time.Unix(int64(*c.Exp), 0)):
		return nil, fmt.Errorf("%w: token expired", ErrAgentIdentity)
	case c.AgentRuntimeID == "" || c.AgentPrivateKey == "":
		return nil, fmt.Errorf("%w: token lacks agent_runtime_id or agent_private_key", ErrAgentIdentity)
	}
	return &c, nil
}

func decodeSegment(seg string, v any) bool {
	b, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(seg, "="))
	return err == nil && json.Unmarshal(b, v) == nil
}

func audienceHas(raw json.RawMessage, want string) bool {
	var one string
	if json.Unmarshal(raw, &one) == nil {
		return one == want
	}
	var many []string
	if json.Unmarshal(raw, &many) == nil {
		for _, s := range many {
			if s == want {
				return true
			}
		}
	}
	return false
}

// JWKSURL derives the JWKS location from the ChatGPT base URL (spec §11.5 step 2).
func JWKSURL(base string) string {
	b := strings.TrimRight(strings.TrimSpace(base), "/")
	switch {
	case strings.Contains(b, "/backend-api"):
		return b + "/wham/agent-identities/jwks"
	case strings.HasSuffix(b, "/api/codex"):
		return b + "/agent-identities/jwks"
	}
	return b + "/api/codex/agent-identities/jwks"
}

func (a *AgentIdentity) fetchKey(ctx context.Context, kid string) (*rsa.PublicKey, error) {
	ctx, cancel := context.WithTimeout(ctx, jwksTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, JWKSURL(a.opts.ChatGPTBaseURL), nil)
	if err != nil {
		return nil, fmt.Errorf("%w: bad ChatGPT base URL", ErrAgentIdentity)
	}
	resp, err := a.opts.HTTPClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%w: fetching JWKS failed", ErrAgentIdentity)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxJWKSBody))
	if !is2xx(resp.StatusCode) {
		return nil, fmt.Errorf("%w: fetching JWKS: HTTP %d", ErrAgentIdentity, resp.StatusCode)
	}
	var set struct {
		Keys []struct {
			Kty, Kid, N, E string
		} `json:"keys"`
	}
	if json.Unmarshal(body, &set) != nil {
		return nil, fmt.Errorf("%w: malformed JWKS", ErrAgentIdentity)
	}
	for _, k := range set.Keys {
		if k.Kid != kid || k.Kty != "RSA" {
			continue
		}
		n, err1 := base64.RawURLEncoding.DecodeString(k.N)
		e, err2 := base64.RawURLEncoding.DecodeString(k.E)
		if err1 != nil || err2 != nil || len(e) == 0 || len(e) > 4 {
			break
		}
		return &rsa.PublicKey{N: new(big.Int).SetBytes(n), E: int(new(big.Int).SetBytes(e).Int64())}, nil
	}
	return nil, fmt.Errorf("%w: no JWKS key for the token's kid", ErrAgentIdentity)
}

// registerTask registers this process's task (spec §11.5 step 4).
func (a *AgentIdentity) registerTask(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, taskRegisterTimeout)
	defer cancel()
	ts := a.opts.Now().UTC().Truncate(time.Second).Format("2006-01-02T15:04:05Z")
	sig := ed25519.Sign(a.key, []byte(a.runtimeID+":"+ts))
	body, _ := json.Marshal(map[string]string{"timestamp": ts, "signature": base64.StdEncoding.EncodeToString(sig)})
	u := strings.TrimRight(a.opts.AuthAPIBaseURL, "/") + "/v1/agent/" + url.PathEscape(a.runtimeID) + "/task/register"
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("%w: bad auth API base URL", ErrAgentIdentity)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := a.opts.HTTPClient.Do(req)
	if err != nil {
		return fmt.Errorf("%w: registering agent task failed", ErrAgentIdentity)
	}
	defer resp.Body.Close()
	rb, _ := io.ReadAll(io.LimitReader(resp.Body, maxJWKSBody))
	if !is2xx(resp.StatusCode) {
		return fmt.Errorf("%w: registering agent task: HTTP %d", ErrAgentIdentity, resp.StatusCode)
	}
	var r struct {
		TaskID  string `json:"task_id"`
		TaskID2 string `json:"taskId"`
	}
	_ = json.Unmarshal(rb, &r)
	a.taskID = r.TaskID
	if a.taskID == "" {
		a.taskID = r.TaskID2
	}
	if a.taskID == "" {
		return fmt.Errorf("%w: task registration returned no task id", ErrAgentIdentity)
	}
	return nil
}

func (a *AgentIdentity) String() string       { return "AgentIdentity(<redacted>)" }
func (a *AgentIdentity) LogValue() slog.Value { return slog.StringValue(a.String()) }
func (a *AgentIdentity) GoString() string     { return a.String() }
