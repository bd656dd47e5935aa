package direct

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/execlab/executor/registry/api"
)

// Protocol flow (docs/direct-transport.md §2):
//
//	executor ── POST {base}/cloud/environment/{id}/direct/register ──▶ registry (SigV4)
//	         ◀── 2xx {environment_id, transport, registration_id, url} ──
//	executor ── GET url, Upgrade: websocket ──▶ (SigV4)        [Dial]
//	         ◀── 101; then JSON-RPC, the executor answering the requests it receives

// registerRequest is the registration body: exactly {"transport":"direct_jsonrpc_v1"}.
type registerRequest struct {
	Transport string `json:"transport"`
}

// Registration is the registry's answer. All four fields are required by the reference
// (each missing one is a deserialize error, PROBED).
type Registration struct {
	EnvironmentID  string `json:"environment_id"`
	Transport      string `json:"transport"`
	RegistrationID string `json:"registration_id"`
	// URL is the WebSocket URL to dial (ws:// only for loopback hosts). It may carry a
	// query; never log it unredacted.
	URL string `json:"url"`
}

// Options configures Register.
type Options struct {
	// BaseURL is the registry base URL (--remote / --registry): http only for loopback
	// hosts. Trailing slashes are stripped and a path prefix kept. Required.
	BaseURL string
	// EnvironmentID is the environment to register as. Required.
	EnvironmentID string
	// Signer signs the request. Required.
	Signer *Signer
	// HTTPClient sends the request. Nil means a client that follows no redirects.
	HTTPClient *http.Client
	// Timeout bounds the request. Zero means RequestTimeout.
	Timeout time.Duration
}

// Register sends the signed registration and checks the answer: 2xx, the environment asked
// for, Transport, a ws/wss url (wss unless loopback). A 401 or 403 is an ErrAuth carrying
// the status; other statuses are ErrRequest. It does not retry (the reference does not).
func Register(ctx context.Context, o Options) (Registration, error) {
	if o.Signer == nil {
		return Registration{}, errorf(ErrConfig, 0, nil, "direct transport needs a SigV4 signer")
	}
	envID, err := api.ValidateEnvironmentID(o.EnvironmentID)
	if err != nil {
		return Registration{}, errorf(ErrConfig, 0, nil, "%s", err.Error())
	}
	regURL, err := RegisterURL(o.BaseURL, envID)
	if err != nil {
		return Registration{}, err
	}
	body, _ := json.Marshal(registerRequest{Transport: Transport})
	timeout := o.Timeout
	if timeout <= 0 {
		timeout = RequestTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, regURL, bytes.NewReader(body))
	if err != nil {
		return Registration{}, errorf(ErrConfig, 0, nil, "building the registration request")
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "*/*")
	req.Header.Set("User-Agent", "") // none, as the reference (net/http omits an empty one)
	if err := o.Signer.Sign(ctx, req.Header, req.Method, regURL, "application/json", body); err != nil {
		return Registration{}, err
	}
	hc := o.HTTPClient
	if hc == nil {
		hc = noRedirectClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		return Registration{}, errorf(ErrRequest, 0, redactURLError(err), "sending the registration")
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, MaxResponseBody+1))
	if err != nil {
		return Registration{}, errorf(ErrRequest, resp.StatusCode, err, "reading the registration response")
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		kind := ErrRequest
		if resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden {
			kind = ErrAuth
		}
		return Registration{}, errorf(kind, resp.StatusCode, nil, "registration refused (%d %s): %s",
			resp.StatusCode, http.StatusText(resp.StatusCode), quoteBody(raw))
	}
	if len(raw) > MaxResponseBody {
		return Registration{}, errorf(ErrProtocol, resp.StatusCode, nil, "registration response exceeds %d bytes", MaxResponseBody)
	}
	reg, err := ParseRegistration(raw, envID)
	if err != nil {
		return Registration{}, err
	}
	return reg, nil
}

// ParseRegistration decodes and checks a registration response body for environment envID.
func ParseRegistration(raw []byte, envID string) (Registration, error) {
	var reg Registration
	var probe map[string]json.RawMessage
	if err := json.Unmarshal(raw, &probe); err != nil {
		return Registration{}, errorf(ErrProtocol, 0, nil, "registration response is not a JSON object")
	}
	for _, f := range []string{"environment_id", "transport", "registration_id", "url"} {
		if _, ok := probe[f]; !ok {
			return Registration{}, errorf(ErrProtocol, 0, nil, "registration response is missing field `%s`", f)
		}
	}
	if err := json.Unmarshal(raw, &reg); err != nil {
		return Registration{}, errorf(ErrProtocol, 0, nil, "registration response fields have the wrong types")
	}
	if reg.EnvironmentID != envID {
		return Registration{}, errorf(ErrProtocol, 0, nil, "environment registry returned a different environment id")
	}
	if reg.Transport != Transport {
		return Registration{}, errorf(ErrProtocol, 0, nil, "environment registry returned unsupported direct transport `%s`", printable(reg.Transport))
	}
	if err := CheckWebSocketURL(reg.URL); err != nil {
		return Registration{}, err
	}
	return reg, nil
}

// RegisterURL is {base}/cloud/environment/{envID}/direct/register, with the base checked:
// http or https with a host, https unless the host is loopback.
func RegisterURL(base, envID string) (string, error) {
	u, err := url.Parse(strings.TrimSpace(base))
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		if err == nil && u.Scheme != "http" && u.Scheme != "https" && u.Host != "" {
			return "", errorf(ErrConfig, 0, nil, "remote transport requires https for non-loopback endpoints")
		}
		return "", errorf(ErrConfig, 0, nil, "registry URL must be http:// or https:// with a host")
	}
	if u.Scheme == "http" && !isLoopback(u.Hostname()) {
		return "", errorf(ErrConfig, 0, nil, "remote transport requires https for non-loopback endpoints")
	}
	joined, err := api.JoinURL(base, api.Path(envID, RegisterSuffix))
	if err != nil {
		return "", errorf(ErrConfig, 0, nil, "registry URL is empty")
	}
	return joined, nil
}

// CheckWebSocketURL accepts ws:// (loopback hosts only) and wss:// URLs with a host.
func CheckWebSocketURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || (u.Scheme != "ws" && u.Scheme != "wss") {
		return errorf(ErrProtocol, 0, nil, "environment registry returned an invalid websocket url")
	}
	if u.Scheme == "ws" && !isLoopback(u.Hostname()) {
		return errorf(ErrConfig, 0, nil, "remote transport requires wss for non-loopback endpoints")
	}
	return nil
}

func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// noRedirectClient never follows a redirect: a signed request must not be replayed to
// another host.
var noRedirectClient = &http.Client{
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
}

// quoteBody is at most MaxErrorBody bytes of an error body, printable, or the reference's
// placeholder when empty.
func quoteBody(b []byte) string {
	if len(bytes.TrimSpace(b)) == 0 {
		return "empty or malformed error body"
	}
	if len(b) > MaxErrorBody {
		b = b[:MaxErrorBody]
	}
	return printable(string(b))
}

func printable(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return -1
		}
		return r
	}, s)
}

// redactURLError drops the URL (its query may carry a token) from a *url.Error.
func redactURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return fmt.Errorf("%s: %w", ue.Op, ue.Err)
	}
	return err
}
