package client

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"golang.org/x/oauth2"
)

// ChatGPT sign-in constants (spec/registry-auth.md §11.3, §11.4; reference).
const (
	// ChatGPTClientID is the reference's OAuth client id for token refresh.
	ChatGPTClientID = "app_EMoamEEZ73f0CkXaXp7hrann"
	// ChatGPTTokenURL is the default refresh endpoint (override: CODEX_REFRESH_TOKEN_URL_OVERRIDE).
	ChatGPTTokenURL = "https://auth.openai.com/oauth/token"
	// staleAfter: a token without exp is refreshed when last_refresh is older than this.
	staleAfter = 8 * 24 * time.Hour
	// refreshSkew: access tokens are refreshed this long before their exp (our choice; the
	// reference refreshes only once expired).
	refreshSkew = 5 * time.Minute
	// authFileMode is the mode auth.json is written with.
	authFileMode = 0o600
)

// ErrNoChatGPTTokens: auth.json has no usable ChatGPT tokens.
var ErrNoChatGPTTokens = errors.New("auth.json holds no ChatGPT tokens")

// AuthFileOptions configures an AuthFile. Nil means defaults.
type AuthFileOptions struct {
	// TokenURL is the refresh endpoint. Default ChatGPTTokenURL.
	TokenURL string
	// HTTPClient performs refreshes. Nil means a client with a 10 s timeout and no redirects.
	HTTPClient *http.Client
	// Now is the clock. Nil means time.Now.
	Now func() time.Time
	// Logger receives refresh events (never tokens). Nil discards.
	Logger *slog.Logger
}

// AuthFile is ChatGPT sign-in state from $CODEX_HOME/auth.json (spec §11.3). It sends
// `authorization: Bearer <tokens.access_token>` and `chatgpt-account-id: <tokens.account_id>`,
// refreshes the access token through golang.org/x/oauth2 (refresh-token grant, the
// reference's client id) before it expires and once after a registry 401, and persists the
// result atomically with mode 0600, keeping every other member of the file. It is safe for
// concurrent use.
type AuthFile struct {
	path string
	opts AuthFileOptions

	// mu serialises refreshes and guards doc, access, refresh, account and lastRefresh.
	mu          sync.Mutex
	doc         map[string]json.RawMessage // the whole file, unknown members kept
	tokens      map[string]json.RawMessage // doc["tokens"]
	access      string
	refresh     string
	account     string
	fedramp     bool
	lastRefresh time.Time
}

// LoadAuthFile reads path. It fails with ErrNoChatGPTTokens when the file has no access token.
func LoadAuthFile(path string, opts *AuthFileOptions) (*AuthFile, error) {
	a := &AuthFile{path: path}
	if opts != nil {
		a.opts = *opts
	}
	if a.opts.TokenURL == "" {
		a.opts.TokenURL = ChatGPTTokenURL
	}
	if a.opts.HTTPClient == nil {
		a.opts.HTTPClient = &http.Client{Timeout: RequestTimeout,
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	}
	if a.opts.Now == nil {
		a.opts.Now = time.Now
	}
	if a.opts.Logger == nil {
		a.opts.Logger = slog.New(slog.DiscardHandler)
	}
	if err := a.loadLocked(); err != nil {
		return nil, err
	}
	return a, nil
}

func (a *AuthFile) loadLocked() error {
	b, err := os.ReadFile(a.path)
	if err != nil {
		return fmt.Errorf("reading auth.json: %w", err)
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(b, &doc); err != nil {
		return fmt.Errorf("parsing auth.json: invalid JSON")
	}
	var tokens map[string]json.RawMessage
	if raw, ok := doc["tokens"]; ok && string(raw) != "null" {
		if err := json.Unmarshal(raw, &tokens); err != nil {
			return fmt.Errorf("parsing auth.json tokens: invalid JSON")
		}
	}
	str := func(k string) string {
		var s string
		_ = json.Unmarshal(tokens[k], &s)
		return strings.TrimSpace(s)
	}
	if str("access_token") == "" {
		return ErrNoChatGPTTokens
	}
	a.doc, a.tokens = doc, tokens
	a.access, a.refresh, a.account = str("access_token"), str("refresh_token"), str("account_id")
	a.fedramp = idTokenFedRAMP(str("id_token"))
	a.lastRefresh = time.Time{}
	var lr string
	if json.Unmarshal(doc["last_refresh"], &lr) == nil {
		a.lastRefresh, _ = time.Parse(time.RFC3339Nano, lr)
	}
	return nil
}

// Apply refreshes the access token if it is expired or about to expire, then sets the
// headers. A failed proactive refresh is logged and the current token used.
func (a *AuthFile) Apply(ctx context.Context, h http.Header) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.staleLocked() && a.refresh != "" {
		if err := a.refreshLocked(ctx, "proactive_expiry"); err != nil {
			a.opts.Logger.Warn("refreshing ChatGPT access token failed", "refresh_reason", "proactive_expiry", "error", err)
		}
	}
	setChatGPTHeaders(h, a.access, a.account, a.fedramp)
	return nil
}

// ForceRefresh refreshes the access token now (after a registry 401).
func (a *AuthFile) ForceRefresh(ctx context.Context) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.refresh == "" {
		return errors.New("auth.json has no refresh token")
	}
	return a.refreshLocked(ctx, "forced")
}

func (a *AuthFile) staleLocked() bool {
	now := a.opts.Now()
	if exp, ok := jwtExpiry(a.access); ok {
		return !now.Before(exp.Add(-refreshSkew))
	}
	return a.lastRefresh.IsZero() || now.Sub(a.lastRefresh) > staleAfter
}

// refreshLocked reloads the file (another process may have rotated the tokens), then runs the
// refresh-token grant and persists the result.
func (a *AuthFile) refreshLocked(ctx context.Context, reason string) error {
	prev := a.access
	if err := a.loadLocked(); err == nil && a.access != prev && (reason == "forced" || !a.staleLocked()) {
		a.opts.Logger.Info("ChatGPT tokens were rotated by another process", "refresh_reason", reason)
		return nil
	}
	conf := &oauth2.Config{ClientID: ChatGPTClientID,
		Endpoint: oauth2.Endpoint{TokenURL: a.opts.TokenURL, AuthStyle: oauth2.AuthStyleInParams}}
	ctx = context.WithValue(ctx, oauth2.HTTPClient, a.opts.HTTPClient)
	tok, err := conf.TokenSource(ctx, &oauth2.Token{RefreshToken: a.refresh}).Token()
	if err != nil {
		var re *oauth2.RetrieveError
		if errors.As(err, &re) && re.Response != nil {
			return fmt.Errorf("refreshing ChatGPT token: HTTP %d", re.Response.StatusCode)
		}
		return errors.New("refreshing ChatGPT token: request failed")
	}
	set := func(k, v string) {
		if v != "" {
			b, _ := json.Marshal(v)
			a.tokens[k] = b
		}
	}
	set("access_token", tok.AccessToken)
	if tok.RefreshToken != a.refresh {
		set("refresh_token", tok.RefreshToken)
	}
	if id, ok := tok.Extra("id_token").(string); ok {
		set("id_token", id)
	}
	tb, _ := json.Marshal(a.tokens)
	a.doc["tokens"] = tb
	now := a.opts.Now().UTC()
	lr, _ := json.Marshal(now.Format(time.RFC3339Nano))
	a.doc["last_refresh"] = lr
	if err := writeFileAtomic(a.path, a.doc); err != nil {
		return err
	}
	a.access = tok.AccessToken
	if tok.RefreshToken != "" {
		a.refresh = tok.RefreshToken
	}
	a.lastRefresh = now
	a.opts.Logger.Info("refreshed ChatGPT access token", "refresh_reason", reason)
	return nil
}

// writeFileAtomic writes doc as indented JSON next to path and renames it into place, so a
// crash leaves either the old or the new file, never a partial one.
func writeFileAtomic(path string, doc map[string]json.RawMessage) error {
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding auth.json: %w", err)
	}
	f, err := os.CreateTemp(filepath.Dir(path), ".auth.json.tmp-*")
	if err != nil {
		return fmt.Errorf("writing auth.json: %w", err)
	}
	tmp := f.Name()
	defer os.Remove(tmp) // no-op after a successful rename
	if err := f.Chmod(authFileMode); err != nil {
		f.Close()
		return fmt.Errorf("writing auth.json: %w", err)
	}
	if _, err := f.Write(append(b, '\n')); err != nil {
		f.Close()
		return fmt.Errorf("writing auth.json: %w", err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("writing auth.json: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("writing auth.json: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("writing auth.json: %w", err)
	}
	return nil
}

func (a *AuthFile) String() string       { return "AuthFile(<redacted>)" }
func (a *AuthFile) LogValue() slog.Value { return slog.StringValue(a.String()) }
func (a *AuthFile) GoString() string     { return a.String() }

// jwtClaims decodes a JWT's payload without verifying it (auth.json tokens are trusted local
// state; the registry verifies them).
func jwtClaims(tok string, v any) bool {
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		return false
	}
	b, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(parts[1], "="))
	if err != nil {
		return false
	}
	return json.Unmarshal(b, v) == nil
}

func jwtExpiry(tok string) (time.Time, bool) {
	var c struct {
		Exp *float64 `json:"exp"`
	}
	if !jwtClaims(tok, &c) || c.Exp == nil {
		return time.Time{}, false
	}
	return time.Unix(int64(*c.Exp), 0), true
}

// idTokenFedRAMP reads the FedRAMP flag of the id token's OpenAI auth claims, if present.
func idTokenFedRAMP(idToken string) bool {
	var c struct {
		Auth struct {
			FedRAMP bool `json:"chatgpt_account_is_fedramp"`
		} `json:"https://api.openai.com/auth"`
	}
	return jwtClaims(idToken, &c) && c.Auth.FedRAMP
}
