package direct

import (
	"context"
	"net/http"

	"github.com/coder/websocket"
)

// DialOptions configures Dial.
type DialOptions struct {
	// Signer signs the upgrade request. Required.
	Signer *Signer
	// HTTPClient performs the upgrade. Nil means http.DefaultClient's transport with no
	// redirects.
	HTTPClient *http.Client
	// Header is added to the upgrade request, unsigned (x-request-id, traceparent). May be
	// nil.
	Header http.Header
}

// Dial opens the WebSocket at rawURL with a SigV4-signed upgrade (host, path, query and
// x-amz-date signed, payload hash of the empty body). A non-101 answer is an *Error with
// Status set (ErrAuth for 401/403, ErrRequest otherwise); a failure without a status is
// ErrRequest with Status 0. The caller owns the returned connection (compression off, read
// limit to be set by the caller).
func Dial(ctx context.Context, rawURL string, o DialOptions) (*websocket.Conn, error) {
	if o.Signer == nil {
		return nil, errorf(ErrConfig, 0, nil, "direct transport needs a SigV4 signer")
	}
	if err := CheckWebSocketURL(rawURL); err != nil {
		return nil, err
	}
	h := http.Header{}
	for k, v := range o.Header {
		h[k] = append([]string(nil), v...)
	}
	if _, ok := h["User-Agent"]; !ok {
		h.Set("User-Agent", "") // none, as the reference (net/http omits an empty one)
	}
	if err := o.Signer.Sign(ctx, h, http.MethodGet, rawURL, "", nil); err != nil {
		return nil, err
	}
	hc := o.HTTPClient
	if hc == nil {
		hc = noRedirectClient
	}
	c, resp, err := websocket.Dial(ctx, rawURL, &websocket.DialOptions{
		HTTPClient: hc, HTTPHeader: h, CompressionMode: websocket.CompressionDisabled,
	})
	if err != nil {
		status := 0
		if resp != nil {
			status = resp.StatusCode
			if resp.Body != nil {
				_ = resp.Body.Close()
			}
		}
		kind := ErrRequest
		if status == http.StatusUnauthorized || status == http.StatusForbidden {
			kind = ErrAuth
		}
		if status != 0 {
			return nil, errorf(kind, status, nil, "failed to connect to exec-server websocket: HTTP error: %d %s", status, http.StatusText(status))
		}
		return nil, errorf(ErrRequest, 0, redactURLError(err), "failed to connect to exec-server websocket")
	}
	return c, nil
}
