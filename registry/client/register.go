package client

import (
	"context"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"net/http"
	"net/url"
	"time"

	"github.com/execlab/executor/registry/api"
)

// Registration is a successful register (spec/registry-auth.md §3.2). URL is the rendezvous
// websocket URL, used verbatim; its query is a credential, so String redacts it.
type Registration struct {
	EnvironmentID  string
	URL            string
	RegistrationID string
	// ExitNoticeToken is our registry's one-shot exit notice token
	// (api.RegisterResponse.ExitNoticeToken), "" when the registry sent none or one that
	// is not printable ASCII of at most api.MaxExitNoticeTokenLen bytes. A credential:
	// String leaves it out.
	ExitNoticeToken string
}

// String prints the ids with the URL reduced to scheme://host/path.
func (r Registration) String() string {
	safe := "<invalid url>"
	if u, err := url.Parse(r.URL); err == nil {
		safe = (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path}).String()
	}
	return "Registration{environment_id:" + r.EnvironmentID + ", url:" + safe + ", registration:" + r.RegistrationID + "}"
}

// Register posts the executor public key (opaque key JSON) and validates the response. It
// retries 503 registration_conflict and 502 authentication_service_unavailable forever
// (until ctx is done) with the §8.1 backoff; every other failure is returned as an *Error. A
// 401/403 also triggers one forced refresh when the Auth is a Refresher, but is not retried
// (spec §7: refresh for the next start, fail now).
func (c *Client) Register(ctx context.Context, executorKey json.RawMessage) (Registration, error) {
	body, err := json.Marshal(api.RegisterRequest{SecurityProfile: api.SecurityProfile, ExecutorPublicKey: executorKey})
	if err != nil {
		return Registration{}, &Error{Kind: ErrConfig, Detail: "encoding executor public key"}
	}
	base := c.retryInit
	for attempt := 1; ; attempt++ {
		resp, err := c.post(ctx, c.registerURL, body, nil)
		if err != nil {
			if ctx.Err() != nil {
				return Registration{}, ctx.Err()
			}
			if ce := (*credentialError)(nil); errors.As(err, &ce) {
				return Registration{}, authBuildError(ce.err)
			}
			return Registration{}, c.transportError(err)
		}
		if is2xx(resp.status) {
			return c.parseRegistration(resp.body)
		}
		if api.RegisterRetryable(resp.status, errorCode(resp.body)) {
			delay := base + rand.N(base/2+1)
			base = min(base*2, c.retryMax)
			c.log.Info("Noise executor retrying uncommitted registry registration",
				"noise_event", "registration", "noise_outcome", "retry",
				"retry_attempt", attempt, "retry_delay_ms", delay.Milliseconds(), "status", resp.status)
			t := time.NewTimer(delay)
			select {
			case <-ctx.Done():
				t.Stop()
				return Registration{}, ctx.Err()
			case <-t.C:
			}
			continue
		}
		if resp.status == http.StatusUnauthorized {
			if r, ok := c.auth.(Refresher); ok {
				if err := r.ForceRefresh(ctx); err != nil {
					c.log.Warn("refreshing registry credentials after 401 failed", "error", err)
				}
			}
		}
		return Registration{}, registerHTTPError(resp.status)
	}
}

func (c *Client) transportError(err error) *Error {
	if errors.Is(err, errTimeout) {
		return &Error{Kind: ErrRequest, Detail: "route-aware request timed out"}
	}
	return &Error{Kind: ErrRequest, Detail: "error sending request for url (" + c.safeBase + ")"}
}

// errorCode returns error.code of an {"error":{"code":…}} body, or "".
func errorCode(body []byte) string {
	var e api.ErrorResponse
	if json.Unmarshal(body, &e) != nil {
		return ""
	}
	return e.Error.Code
}

func (c *Client) parseRegistration(body []byte) (Registration, error) {
	var r struct {
		EnvironmentID  *string `json:"environment_id"`
		URL            *string `json:"url"`
		Profile        *string `json:"security_profile"`
		RegistrationID *string `json:"executor_registration_id"`
		// Optional and ours: parsed leniently (an ill-typed member is dropped, as released
		// executors drop every unknown member).
		ExitNoticeToken json.RawMessage `json:"exit_notice_token"`
	}
	if err := json.Unmarshal(body, &r); err != nil ||
		r.EnvironmentID == nil || r.URL == nil || r.Profile == nil || r.RegistrationID == nil {
		return Registration{}, protocolError(detailInvalidResponse)
	}
	switch {
	case *r.EnvironmentID != c.envID:
		return Registration{}, protocolError(detailDifferentEnvID)
	case *r.Profile != api.SecurityProfile:
		return Registration{}, protocolError("environment registry returned unsupported security profile `" + sanitizeValue(*r.Profile) + "`")
	case *r.RegistrationID == "":
		return Registration{}, protocolError(detailInvalidResponse)
	}
	if err := api.ValidateRegistrationID(*r.RegistrationID); err != nil {
		return Registration{}, protocolError(detailInvalidRegID)
	}
	u, err := url.Parse(*r.URL)
	if err != nil || (u.Scheme != "ws" && u.Scheme != "wss") || u.Host == "" {
		return Registration{}, protocolError(detailInvalidResponse)
	}
	return Registration{EnvironmentID: *r.EnvironmentID, URL: *r.URL, RegistrationID: *r.RegistrationID,
		ExitNoticeToken: exitNoticeToken(r.ExitNoticeToken)}, nil
}

// exitNoticeToken returns the exit notice token of a register response, or "" when it is
// absent or not a string of 1…api.MaxExitNoticeTokenLen printable ASCII bytes.
func exitNoticeToken(raw json.RawMessage) string {
	var tok string
	if len(raw) == 0 || json.Unmarshal(raw, &tok) != nil || tok == "" || len(tok) > api.MaxExitNoticeTokenLen {
		return ""
	}
	for i := 0; i < len(tok); i++ {
		if tok[i] <= ' ' || tok[i] > '~' {
			return ""
		}
	}
	return tok
}

// ExitNotice returns the request that reports reg's executor exited (our registry's
// extension, api.ExitNoticeRequest, docs/reliability.md §5): the URL (on the same registry
// base as register: the token never goes anywhere else) and the JSON body, which holds the
// token (a credential). ok is false when the registry sent no token (a released or cloud
// registry): there is nothing to report then.
func (c *Client) ExitNotice(reg Registration) (url string, body []byte, ok bool) {
	if reg.ExitNoticeToken == "" || reg.RegistrationID == "" {
		return "", nil, false
	}
	body, err := json.Marshal(api.ExitNoticeRequest{ExecutorRegistrationID: reg.RegistrationID, Token: reg.ExitNoticeToken})
	if err != nil {
		return "", nil, false
	}
	return c.exitedURL, body, true
}

// sanitizeValue bounds a registry-provided value echoed in an error (the profile name).
func sanitizeValue(s string) string {
	const max = 64
	out := make([]rune, 0, len(s))
	for _, r := range s {
		if len(out) == max {
			return string(out) + "…"
		}
		if r < 0x20 || r == 0x7f {
			r = '?'
		}
		out = append(out, r)
	}
	return string(out)
}
