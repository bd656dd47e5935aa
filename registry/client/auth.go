package client

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strings"
)

// Auth sets the credentials of one registry request. Implementations are safe for concurrent
// use and redact themselves in String and LogValue.
type Auth interface {
	// Apply sets the authorization headers (and chatgpt-account-id, x-openai-fedramp where
	// the source has them) on h. It may refresh credentials first, bounded by ctx.
	Apply(ctx context.Context, h http.Header) error
}

// Refresher is implemented by an Auth whose credentials can be refreshed on demand. The
// client calls ForceRefresh once after a 401.
type Refresher interface {
	ForceRefresh(ctx context.Context) error
}

// ErrInvalidBearer: an empty or multi-line bearer (spec §11.1: `invalid registration bearer`).
var ErrInvalidBearer = errors.New("invalid registration bearer")

// Bearer is a static bearer credential: --registration-bearer-stdin, CODEX_API_KEY.
type Bearer struct {
	token string
}

// NewBearer trims token and rejects an empty one or one containing control characters.
func NewBearer(token string) (*Bearer, error) {
	token = strings.TrimSpace(token)
	if token == "" || strings.ContainsAny(token, "\r\n\x00") {
		return nil, ErrInvalidBearer
	}
	return &Bearer{token: token}, nil
}

// Apply sets authorization: Bearer <token>.
func (b *Bearer) Apply(_ context.Context, h http.Header) error {
	h.Set("Authorization", "Bearer "+b.token)
	return nil
}

func (b *Bearer) String() string       { return "Bearer(<redacted>)" }
func (b *Bearer) LogValue() slog.Value { return slog.StringValue(b.String()) }
func (b *Bearer) GoString() string     { return b.String() }

// ChatGPTToken is a ChatGPT access token with its account id (--chatgpt-token-stdin with
// --chatgpt-account-id, or the tokens of auth.json without refresh).
type ChatGPTToken struct {
	token     string
	accountID string
	fedramp   bool
}

// NewChatGPTToken checks the token is non-empty; accountID may be empty (no header).
func NewChatGPTToken(token, accountID string, fedramp bool) (*ChatGPTToken, error) {
	token = strings.TrimSpace(token)
	if token == "" || strings.ContainsAny(token, "\r\n\x00") {
		return nil, errors.New("invalid ChatGPT access token")
	}
	return &ChatGPTToken{token: token, accountID: strings.TrimSpace(accountID), fedramp: fedramp}, nil
}

// Apply sets authorization and, when known, chatgpt-account-id and x-openai-fedramp.
func (c *ChatGPTToken) Apply(_ context.Context, h http.Header) error {
	setChatGPTHeaders(h, c.token, c.accountID, c.fedramp)
	return nil
}

func setChatGPTHeaders(h http.Header, token, accountID string, fedramp bool) {
	h.Set("Authorization", "Bearer "+token)
	if accountID != "" {
		h.Set(headerAccountID, accountID)
	}
	if fedramp {
		h.Set(headerFedRAMP, "true")
	}
}

func (c *ChatGPTToken) String() string       { return "ChatGPTToken(<redacted>)" }
func (c *ChatGPTToken) LogValue() slog.Value { return slog.StringValue(c.String()) }
func (c *ChatGPTToken) GoString() string     { return c.String() }

// ErrAccountMismatch: --chatgpt-account-id differs from the token's account claim.
var ErrAccountMismatch = errors.New("--chatgpt-account-id does not match the token")

// NewChatGPTTokenChecked is NewChatGPTToken for --chatgpt-token-stdin: when the token is a JWT
// carrying an account claim, a given accountID must match it, and a missing accountID is taken
// from it.
func NewChatGPTTokenChecked(token, accountID string) (*ChatGPTToken, error) {
	var c struct {
		Auth struct {
			AccountID string `json:"chatgpt_account_id"`
			FedRAMP   bool   `json:"chatgpt_account_is_fedramp"`
		} `json:"https://api.openai.com/auth"`
	}
	accountID = strings.TrimSpace(accountID)
	fedramp := false
	if jwtClaims(strings.TrimSpace(token), &c) && c.Auth.AccountID != "" {
		if accountID != "" && accountID != c.Auth.AccountID {
			return nil, ErrAccountMismatch
		}
		accountID, fedramp = c.Auth.AccountID, c.Auth.FedRAMP
	}
	return NewChatGPTToken(token, accountID, fedramp)
}
