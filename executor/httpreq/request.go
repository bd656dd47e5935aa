package httpreq

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/execlab/executor/executor/jsonrpc"
	"github.com/execlab/executor/executor/protocol"
	"github.com/execlab/executor/jsonwire"
)

// redirectError carries the reference's text for a refused redirect.
type redirectError struct{ msg string }

func (e *redirectError) Error() string { return e.msg }

// Request implements http/request. It returns *protocol.HTTPRequestResult, or for
// streamResponse jsonrpc.Then(result, start), where start launches the body pump after the
// response has been queued.
func (c *Client) Request(ctx context.Context, p *protocol.HTTPRequestParams) (any, error) {
	result, start, err := c.request(ctx, p)
	if err != nil {
		return nil, err
	}
	if start != nil {
		return jsonrpc.Then(result, start), nil
	}
	return result, nil
}

// request performs the exchange; start is non-nil for a streamed body and must be called
// once the response has been queued.
func (c *Client) request(ctx context.Context, p *protocol.HTTPRequestParams) (*protocol.HTTPRequestResult, func(), error) {
	req, err := c.buildRequest(p)
	if err != nil {
		return nil, nil, err
	}
	// A streamed body outlives the request handler, so its exchange runs under the
	// client's lifetime ctx; a buffered one under the request's.
	base := ctx
	if p.StreamResponse {
		base = c.ctx
	}
	var cancel context.CancelFunc
	if p.TimeoutMs != nil {
		base, cancel = context.WithTimeout(base, time.Duration(min(*p.TimeoutMs, uint64(1<<62)/uint64(time.Millisecond)))*time.Millisecond)
	} else {
		base, cancel = context.WithCancel(base)
	}
	req = req.WithContext(base)

	var s *stream
	if p.StreamResponse {
		s = &stream{client: c, id: p.RequestID, cancel: cancel}
		if err := c.reserve(p.RequestID, s); err != nil {
			cancel()
			if errors.Is(err, errClosed) {
				return nil, nil, jsonwire.Internal("http/request failed: %s", err.Error())
			}
			return nil, nil, err
		}
	}
	fail := func(e error) (*protocol.HTTPRequestResult, func(), error) {
		cancel()
		if s != nil {
			c.release(p.RequestID)
		}
		return nil, nil, e
	}

	hc := &http.Client{Transport: c.transport, CheckRedirect: checkRedirect(p.RedirectPolicy)}
	resp, err := hc.Do(req)
	if err != nil {
		return fail(jsonwire.Internal("http/request failed: %s", transportText(err)))
	}
	result := &protocol.HTTPRequestResult{Status: uint16(resp.StatusCode), Headers: responseHeaders(resp)}
	if s == nil {
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		cancel()
		if err != nil {
			return nil, nil, jsonwire.Internal("failed to read http/request response body: %s", transportText(err))
		}
		result.BodyBase64 = base64.StdEncoding.EncodeToString(body)
		return result, nil, nil
	}
	s.body = resp.Body
	return result, s.start, nil
}

// buildRequest validates method, URL, headers and body (all -32602).
func (c *Client) buildRequest(p *protocol.HTTPRequestParams) (*http.Request, error) {
	if p.Method == "" || !validMethod(p.Method) {
		return nil, jsonwire.InvalidParams("http/request method is invalid: invalid HTTP method")
	}
	u, err := url.Parse(p.URL)
	if err != nil {
		return nil, jsonwire.InvalidParams("http/request url is invalid: %s", urlErrText(err))
	}
	if u.Scheme == "" {
		return nil, jsonwire.InvalidParams("http/request url is invalid: relative URL without a base")
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, jsonwire.InvalidParams("http/request only supports http and https URLs, got %s", u.Scheme)
	}
	if u.Host == "" {
		return nil, jsonwire.InvalidParams("http/request url is invalid: empty host")
	}
	var body io.Reader
	if p.BodyBase64 != nil { // decoded (and validated) with the params
		body = bytes.NewReader(*p.BodyBase64)
	}
	req, err := http.NewRequest(p.Method, u.String(), body)
	if err != nil {
		return nil, jsonwire.InvalidParams("http/request url is invalid: %s", err.Error())
	}
	for _, h := range p.Headers {
		value := h.Value
		if h.ValueEnvVar != nil {
			v, err := c.envValue(h.Name, *h.ValueEnvVar)
			if err != nil {
				return nil, err
			}
			value += v
		}
		if h.Name == "" || !isToken(h.Name) {
			return nil, jsonwire.InvalidParams("http/request header name is invalid: invalid HTTP header name")
		}
		if !validHeaderValue(value) {
			return nil, jsonwire.InvalidParams("http/request header %s has an invalid value: failed to parse header value", h.Name)
		}
		if strings.EqualFold(h.Name, "host") {
			req.Host = value
			continue
		}
		k := wireHeaderKey(h.Name)
		req.Header[k] = append(req.Header[k], value)
	}
	return req, nil
}

// goOwnedHeaders are the request header names (canonical form) that net/http's client
// looks up or writes itself (default User-Agent and Accept-Encoding, framing, Connection,
// Expect, Range, URL userinfo Authorization, retry keys, redirect stripping): they keep
// Go's canonical key so that logic still sees them.
var goOwnedHeaders = map[string]bool{
	"User-Agent": true, "Content-Length": true, "Transfer-Encoding": true, "Trailer": true,
	"Connection": true, "Upgrade": true, "Expect": true, "Range": true, "Accept-Encoding": true,
	"Authorization": true, "Cookie": true, "Idempotency-Key": true, "X-Idempotency-Key": true,
}

// wireHeaderKey is the key a request header name is stored (and sent) under: lower-case,
// as the reference's hyper sends every name (capabilities-0.171.0.md §10: X-Auth goes out
// as x-auth), except goOwnedHeaders. Names are case-insensitive in HTTP, so only the bytes
// on the wire change.
func wireHeaderKey(name string) string {
	if c := http.CanonicalHeaderKey(name); goOwnedHeaders[c] {
		return c
	}
	return strings.ToLower(name)
}

// envValue resolves valueEnvVar (spec/jsonrpc.md §3.7). The value is never logged.
func (c *Client) envValue(header, name string) (string, error) {
	for _, d := range deniedEnvVars {
		if strings.EqualFold(d, name) {
			return "", jsonwire.InvalidParams("http/request header %s cannot use executor environment variable %s", header, name)
		}
	}
	v, ok := c.lookupEnv(name)
	if !ok {
		return "", jsonwire.InvalidParams("http/request header %s requires executor environment variable %s", header, name)
	}
	if v == "" {
		return "", jsonwire.InvalidParams("http/request header %s requires a non-empty executor environment variable %s", header, name)
	}
	return v, nil
}

// checkRedirect applies redirectPolicy and, for a followed redirect, drops the credential
// headers (sensitiveHeaders) once the chain has left the request's origin.
func checkRedirect(policy protocol.HTTPRedirectPolicy) func(*http.Request, []*http.Request) error {
	return func(req *http.Request, via []*http.Request) error {
		if policy == protocol.HTTPRedirectStop {
			return http.ErrUseLastResponse
		}
		if req.URL.Scheme != "http" && req.URL.Scheme != "https" {
			return &redirectError{msg: "redirect target uses unsupported URL scheme: " + req.URL.Scheme}
		}
		if len(via) > MaxRedirects {
			return &redirectError{msg: "too many redirects"}
		}
		if leftOrigin(req, via) {
			// Request headers are stored under their wire key (wireHeaderKey: lower-case
			// for most names), so each is removed whatever the case of its key.
			for k := range req.Header {
				for _, h := range sensitiveHeaders {
					if strings.EqualFold(k, h) {
						delete(req.Header, k)
					}
				}
			}
		}
		return nil
	}
}

// leftOrigin reports whether any hop of the redirect chain (via, then req) changed scheme,
// host or port. net/http copies the first request's headers into every hop, so the whole
// chain is checked each time: credentials dropped on the way out stay dropped on the way
// back, as the reference's (reqwest's) per-hop removal leaves them. net/http alone would
// keep them on a change of port or scheme, and on a move to a subdomain.
func leftOrigin(req *http.Request, via []*http.Request) bool {
	prev := via[0].URL
	for _, r := range append(via[1:len(via):len(via)], req) {
		if !sameOrigin(prev, r.URL) {
			return true
		}
		prev = r.URL
	}
	return false
}

// sameOrigin compares scheme, host (case-insensitively) and port, a missing port being
// the scheme's default.
func sameOrigin(a, b *url.URL) bool {
	return strings.EqualFold(a.Scheme, b.Scheme) && strings.EqualFold(a.Hostname(), b.Hostname()) &&
		portOrDefault(a) == portOrDefault(b)
}

func portOrDefault(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	if strings.EqualFold(u.Scheme, "https") {
		return "443"
	}
	return "80"
}

// transportText extracts the detail of a net/http client error.
func transportText(err error) string {
	var re *redirectError
	if errors.As(err, &re) {
		return re.msg
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		if errors.Is(ue.Err, context.DeadlineExceeded) {
			return "operation timed out"
		}
		return ue.Err.Error()
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return "operation timed out"
	}
	return err.Error()
}

func urlErrText(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err.Error()
	}
	return err.Error()
}

// responseHeaders returns the headers with lower-case names (as hyper reports them), sorted
// by name, values of one name in received order; non-UTF-8 values are dropped. net/http
// moves Transfer-Encoding out of the header map; it is put back, as the reference reports
// it. (The reference keeps wire order; net/http cannot: a documented deviation.)
func responseHeaders(resp *http.Response) []protocol.HTTPResponseHeader {
	h := resp.Header
	if len(resp.TransferEncoding) > 0 && h.Get("Transfer-Encoding") == "" {
		h = h.Clone()
		h.Set("Transfer-Encoding", strings.Join(resp.TransferEncoding, ", "))
	}
	names := make([]string, 0, len(h))
	for k := range h {
		names = append(names, k)
	}
	sort.Strings(names)
	out := make([]protocol.HTTPResponseHeader, 0, len(h))
	for _, k := range names {
		for _, v := range h[k] {
			if !utf8.ValidString(v) {
				continue
			}
			out = append(out, protocol.HTTPResponseHeader{Name: strings.ToLower(k), Value: v})
		}
	}
	return out
}

// validMethod reports whether m is an RFC 9110 token.
func validMethod(m string) bool { return isToken(m) }

// isToken reports whether s consists of RFC 9110 tchars.
func isToken(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// validHeaderValue rejects control bytes other than TAB (CR and LF included) and DEL, as
// the http crate's HeaderValue does.
func validHeaderValue(v string) bool {
	for i := 0; i < len(v); i++ {
		if c := v[i]; (c < 0x20 && c != '\t') || c == 0x7F {
			return false
		}
	}
	return true
}
