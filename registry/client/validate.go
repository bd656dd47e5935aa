package client

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/execlab/executor/registry/api"
)

// Validate asks the registry whether the Noise-authenticated harness key with its message-1
// authorization may open stream streamID (spec/registry-auth.md §4). It returns nil only for
// a 2xx {"valid":true}. Errors: ErrHarnessKeyRejected, ErrValidateTimeout, or a
// *ValidateError (401 wraps ErrValidateUnauthorized). When the Auth is a Refresher, a 401 is
// retried once after a forced credential refresh (beyond the reference, which captures its
// bearer once). Texts never include the response body.
func (c *Client) Validate(ctx context.Context, registrationID, streamID string, harnessKey json.RawMessage, authorization string) error {
	body, err := json.Marshal(api.ValidateRequest{
		ExecutorRegistrationID: registrationID, HarnessPublicKey: harnessKey, HarnessKeyAuthorization: authorization,
	})
	if err != nil {
		return &ValidateError{}
	}
	err = c.validateOnce(ctx, body, streamID)
	if errors.Is(err, ErrValidateUnauthorized) {
		if r, ok := c.auth.(Refresher); ok && r.ForceRefresh(ctx) == nil {
			err = c.validateOnce(ctx, body, streamID)
		}
	}
	return err
}

func (c *Client) validateOnce(ctx context.Context, body []byte, streamID string) error {
	resp, err := c.post(ctx, c.validateURL, body, map[string]string{api.HeaderStreamID: streamID})
	switch {
	case errors.Is(err, errTimeout):
		return ErrValidateTimeout
	case err != nil && ctx.Err() != nil:
		return ctx.Err()
	case err != nil:
		return &ValidateError{}
	case !is2xx(resp.status):
		return &ValidateError{Status: resp.status}
	}
	var v struct {
		Valid *bool `json:"valid"`
	}
	if json.Unmarshal(resp.body, &v) != nil || v.Valid == nil || !*v.Valid {
		return ErrHarnessKeyRejected
	}
	return nil
}
