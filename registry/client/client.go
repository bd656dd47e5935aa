package client

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"time"

	"github.com/execlab/executor/registry/api"
)

// Options configures a Client. It is never mutated.
type Options struct {
	// BaseURL is the registry base URL (--registry); trailing slashes are stripped and any path
	// prefix kept (spec §2.1). Required.
	BaseURL string
	// EnvironmentID is validated and trimmed by New (spec §6). Required.
	EnvironmentID string
	// Auth authorizes every request. Required.
	Auth Auth
	// HTTPClient sends requests. Nil means a client with HTTP/1.1, no redirects, no
	// compression and proxies from the environment. Its CheckRedirect is always overridden.
	HTTPClient *http.Client
	// Timeout bounds each request, headers and body. Default RequestTimeout (10 s).
	Timeout time.Duration
	// RetryInitial and RetryMax set the register retry schedule. Defaults RetryInitial
	// (500 ms) and RetryMax (5 s).
	RetryInitial, RetryMax time.Duration
	// Traceparent returns the W3C traceparent for a request, or "" for none. Nil means none.
	Traceparent func(ctx context.Context) string
	// Logger receives structured logs (component=registry/client). Nil discards.
	Logger *slog.Logger
}

// Client calls the registry for one environment. It is safe for concurrent use.
type Client struct {
	envID       string
	registerURL string
	validateURL string
	exitedURL   string // our registry's exit notice endpoint (ExitNotice)
	safeBase    string // scheme://host/path of the base URL, for error texts
	auth        Auth
	hc          *http.Client
	timeout     time.Duration
	retryInit   time.Duration
	retryMax    time.Duration
	traceparent func(context.Context) string
	log         *slog.Logger
}

// New validates the options (environment id, base URL) without any network call.
func New(opts *Options) (*Client, error) {
	if opts == nil || opts.Auth == nil {
		return nil, &Error{Kind: ErrConfig, Detail: "registry client needs credentials"}
	}
	envID, err := api.ValidateEnvironmentID(opts.EnvironmentID)
	if err != nil {
		return nil, &Error{Kind: ErrConfig, Detail: err.Error()}
	}
	regURL, err := api.JoinURL(opts.BaseURL, api.Path(envID, api.RegisterSuffix))
	if err != nil {
		return nil, &Error{Kind: ErrConfig, Detail: "registry URL is empty"}
	}
	valURL, _ := api.JoinURL(opts.BaseURL, api.Path(envID, api.ValidateSuffix))
	exitedURL, _ := api.JoinURL(opts.BaseURL, api.Path(envID, api.ExecutorExitedSuffix))
	u, err := url.Parse(regURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, &Error{Kind: ErrConfig, Detail: "registry URL must be http:// or https:// with a host"}
	}
	c := &Client{
		envID: envID, registerURL: regURL, validateURL: valURL, exitedURL: exitedURL,
		safeBase: (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path}).String(),
		auth:     opts.Auth, timeout: opts.Timeout, retryInit: opts.RetryInitial, retryMax: opts.RetryMax,
		traceparent: opts.Traceparent, log: opts.Logger,
	}
	if c.timeout <= 0 {
		c.timeout = RequestTimeout
	}
	if c.retryInit <= 0 {
		c.retryInit = RetryInitial
	}
	if c.retryMax <= 0 {
		c.retryMax = RetryMax
	}
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	c.log = c.log.With("component", "registry/client")
	hc := opts.HTTPClient
	if hc == nil {
		hc = &http.Client{Transport: &http.Transport{
			Proxy:               http.ProxyFromEnvironment,
			DialContext:         (&net.Dialer{Timeout: c.timeout, KeepAlive: 30 * time.Second}).DialContext,
			TLSHandshakeTimeout: c.timeout,
			DisableCompression:  true,
			MaxIdleConnsPerHost: 8,
			IdleConnTimeout:     90 * time.Second,
		}}
	} else {
		cp := *hc
		hc = &cp
	}
	hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	c.hc = hc
	return c, nil
}

// EnvironmentID returns the validated, trimmed environment id.
func (c *Client) EnvironmentID() string { return c.envID }

// errTimeout marks a request that exceeded the client's timeout (not the caller's ctx).
var errTimeout = errors.New("registry request timed out")

// response is a fully read reply.
type response struct {
	status int
	body   []byte
}

// post sends one JSON POST with the provider's credentials and reads the reply (bounded).
// The timeout covers connect, headers and body. extra headers are lower-case names.
func (c *Client) post(ctx context.Context, rawURL string, body []byte, extra map[string]string) (response, error) {
	ctx, cancel := context.WithTimeoutCause(ctx, c.timeout, errTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, rawURL, bytes.NewReader(body))
	if err != nil {
		return response{}, fmt.Errorf("building registry request: %w", err)
	}
	h := http.Header{}
	if err := c.auth.Apply(ctx, h); err != nil {
		return response{}, &credentialError{err}
	}
	// Lower-case names go on the wire as stored (spec §2.2: header names are lower-case).
	for k, v := range h {
		req.Header[lowerASCII(k)] = v
	}
	req.Header["content-type"] = []string{"application/json"}
	req.Header["accept"] = []string{"*/*"}
	req.Header["User-Agent"] = []string{""} // present but empty: net/http sends none
	for k, v := range extra {
		req.Header[k] = []string{v}
	}
	if c.traceparent != nil {
		if tp := c.traceparent(ctx); tp != "" {
			req.Header["traceparent"] = []string{tp}
		}
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		if context.Cause(ctx) == errTimeout {
			return response{}, errTimeout
		}
		return response{}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, api.MaxResponseBody))
	if err != nil {
		if context.Cause(ctx) == errTimeout {
			return response{}, errTimeout
		}
		return response{}, fmt.Errorf("reading registry response: %w", err)
	}
	return response{status: resp.StatusCode, body: b}, nil
}

func lowerASCII(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

func is2xx(status int) bool { return status >= 200 && status < 300 }
