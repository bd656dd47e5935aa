package harness

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/execlab/executor/noise"
	"github.com/execlab/executor/registry/api"
)

// ConnectError is a failed connect call (spec/registry-auth.md §5). Its text never includes
// the response body or the token.
type ConnectError struct {
	Status    int    // HTTP status, 0 for transport errors
	Code      string // error.code from the body, if any
	Retryable bool   // per api.ConnectRetryable (transport errors are retryable)
	// ExecutorExited is our registry's executor_exited on 409 environment_offline: the
	// environment's executor reported its exit (docs/reliability.md §5). errors.Is(err,
	// ErrExecutorExited) holds then. Released registries never set it.
	ExecutorExited bool
	Err            error // transport error, or nil
}

// ErrExecutorExited: the registry reported that the environment's executor exited (its
// exit notice, docs/reliability.md §5) and no newer executor has registered. A session on
// it cannot be resumed and its processes are gone: session recovery ends at once with an
// error that wraps it. (A first connection keeps waiting for a new executor, as for any
// offline environment.)
var ErrExecutorExited = errors.New("harness: the environment's executor exited")

// Is reports ErrExecutorExited for a connect refused with executor_exited.
func (e *ConnectError) Is(target error) bool { return target == ErrExecutorExited && e.ExecutorExited }

func (e *ConnectError) Error() string {
	if e.Status == 0 {
		return fmt.Sprintf("environment registry connect failed: %v", e.Err)
	}
	return fmt.Sprintf("environment registry connect failed (%d %s)%s", e.Status, http.StatusText(e.Status), codeSuffix(e.Code))
}

func (e *ConnectError) Unwrap() error { return e.Err }

func codeSuffix(code string) string {
	if code == "" {
		return ""
	}
	return ": " + code
}

// errIncompleteBundle is the reference's text for a 2xx bundle failing its checks.
var errIncompleteBundle = errors.New("environment registry returned incomplete Noise connection data")

// noRedirectClient never follows redirects: the authorization header must not leak.
var noRedirectClient = &http.Client{
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
}

// fetchBundle posts connect with the harness key and checks the bundle
// (spec/registry-auth.md §5.2, §5.3), with a traceparent header unless traceparent is "".
func fetchBundle(ctx context.Context, o *RemoteOptions, env string, key noise.PublicKey, traceparent string) (api.ConnectResponse, error) {
	var bundle api.ConnectResponse
	u, err := api.JoinURL(o.Registry, api.Path(env, api.ConnectSuffix))
	if err != nil {
		return bundle, err
	}
	body, err := json.Marshal(api.ConnectRequest{HarnessPublicKey: key.AppendJSON(nil)})
	if err != nil {
		return bundle, fmt.Errorf("encoding connect request: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, api.RequestTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(body))
	if err != nil {
		return bundle, fmt.Errorf("building connect request: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+o.Token)
	if traceparent != "" {
		req.Header.Set("traceparent", traceparent)
	}
	// One connect per physical attempt: no keep-alive, so no idle connection (and no
	// transport goroutine) outlives the call.
	req.Close = true
	client := o.HTTPClient
	if client == nil {
		client = noRedirectClient
	}
	resp, err := client.Do(req)
	if err != nil {
		return bundle, &ConnectError{Retryable: true, Err: redactURLError(err)}
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, api.MaxResponseBody))
	if err != nil {
		return bundle, &ConnectError{Retryable: true, Err: fmt.Errorf("reading connect response: %w", err)}
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		var e api.ErrorResponse
		_ = json.Unmarshal(raw, &e)
		return bundle, &ConnectError{Status: resp.StatusCode, Code: e.Error.Code, Retryable: api.ConnectRetryable(resp.StatusCode, e.Error.Code),
			ExecutorExited: resp.StatusCode == http.StatusConflict && e.Error.Code == api.CodeEnvironmentOffline && e.Error.ExecutorExited}
	}
	if err := json.Unmarshal(raw, &bundle); err != nil {
		return bundle, errIncompleteBundle
	}
	if bundle.EnvironmentID != env || bundle.SecurityProfile != api.SecurityProfile ||
		strings.TrimSpace(bundle.URL) == "" || strings.TrimSpace(bundle.ExecutorRegistrationID) == "" ||
		strings.TrimSpace(bundle.HarnessKeyAuthorization) == "" || len(bundle.ExecutorPublicKey) == 0 {
		return bundle, errIncompleteBundle
	}
	return bundle, nil
}

// redactURLError drops the request URL from a net/http error (the path is harmless, but
// keep errors uniform with the rest of the relay code).
func redactURLError(err error) error {
	var ue interface{ Unwrap() error }
	if errors.As(err, &ue) {
		if inner := ue.Unwrap(); inner != nil {
			return inner
		}
	}
	return err
}
