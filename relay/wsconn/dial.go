package wsconn

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/coder/websocket"
)

// DialOptions configures Dial. Nil means defaults; it is never mutated.
type DialOptions struct {
	// Header holds extra upgrade request headers (x-request-id, traceparent). It must not
	// carry credentials: the URL's own query is the rendezvous credential. Nil means none.
	Header http.Header
	// Timeout bounds TCP connect plus the upgrade. Default DialTimeout (10 s).
	Timeout time.Duration
	// HTTPClient performs the upgrade. Nil means a client whose transport sets TCP_NODELAY,
	// uses system TLS roots and no proxy, and never follows redirects.
	HTTPClient *http.Client
	// Conn tunes the returned Conn. Nil means defaults.
	Conn *Options
}

// DialError reports a failed dial. StatusCode is the HTTP status of a rejected upgrade, or 0
// for network and protocol errors. Its text names the URL without query or userinfo.
type DialError struct {
	URL        string // redacted: scheme://host/path
	StatusCode int
	Err        error
}

func (e *DialError) Error() string {
	if e.StatusCode != 0 {
		return fmt.Sprintf("dialing rendezvous %s: upgrade rejected with HTTP %d %s",
			e.URL, e.StatusCode, http.StatusText(e.StatusCode))
	}
	return fmt.Sprintf("dialing rendezvous %s: %v", e.URL, e.Err)
}

func (e *DialError) Unwrap() error { return e.Err }

// IsClientError reports whether the upgrade was answered with HTTP 4xx (the executor then
// re-registers before redialling; spec/relay-noise.md §11).
func (e *DialError) IsClientError() bool { return e.StatusCode >= 400 && e.StatusCode < 500 }

// Dial opens the websocket at rawURL, used verbatim. On failure it returns a *DialError whose
// text contains no query string.
func Dial(ctx context.Context, rawURL string, opts *DialOptions) (*Conn, error) {
	var o DialOptions
	if opts != nil {
		o = *opts
	}
	if o.Timeout <= 0 {
		o.Timeout = DialTimeout
	}
	var cork *corkConn
	if o.HTTPClient == nil {
		// A client of its own per dial, so that the connection it dials is known to be
		// this websocket's (a shared transport may hand a dialled connection to another
		// request), and its frames can be batched (cork.go).
		o.HTTPClient = corkedClient(&cork)
	}
	redacted := RedactURL(rawURL)
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "ws" && u.Scheme != "wss") || u.Host == "" {
		return nil, &DialError{URL: redacted, Err: errors.New("rendezvous url must be ws:// or wss:// with a host")}
	}
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	ws, resp, err := websocket.Dial(ctx, rawURL, &websocket.DialOptions{
		HTTPClient: o.HTTPClient,
		HTTPHeader: o.Header,
	})
	if err != nil {
		de := &DialError{URL: redacted, Err: sanitize(err, rawURL, u)}
		if resp != nil && resp.StatusCode != http.StatusSwitchingProtocols {
			de.StatusCode = resp.StatusCode
		}
		if resp != nil && resp.Body != nil {
			resp.Body.Close()
		}
		return nil, de
	}
	c := New(ws, o.Conn)
	c.cork = cork
	c.raw = cork != nil && u.Scheme == "ws" // with TLS the library writes above the cork
	return c, nil
}

// sanitize rewrites err's text so it cannot carry the URL's query or userinfo (net/http
// errors quote the request URL).
func sanitize(err error, rawURL string, u *url.URL) error {
	msg := err.Error()
	safe := RedactURL(rawURL)
	for _, s := range []string{rawURL, u.String()} {
		if s != "" {
			msg = strings.ReplaceAll(msg, s, safe)
		}
	}
	if u.RawQuery != "" {
		msg = strings.ReplaceAll(msg, u.RawQuery, "<redacted>")
	}
	if u.User != nil {
		msg = strings.ReplaceAll(msg, u.User.String(), "<redacted>")
	}
	return &sanitizedError{msg: msg, err: err}
}

// sanitizedError keeps the cause for errors.Is/As while printing the cleaned text.
type sanitizedError struct {
	msg string
	err error
}

func (e *sanitizedError) Error() string { return e.msg }
func (e *sanitizedError) Unwrap() error { return e.err }

// RedactURL returns scheme://host/path of rawURL, without userinfo, query or fragment, for
// logs and errors (spec/relay-noise.md §14: never log the sig= query). An unparsable URL
// yields "<invalid url>".
func RedactURL(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		return "<invalid url>"
	}
	return (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path}).String()
}

// corkedClient is the HTTP client of one Dial without an HTTPClient: TCP_NODELAY, system
// TLS roots, no proxy, no redirects. The TCP connection it dials is wrapped in a corkConn
// stored in *cork (the TLS layer, for wss, sits above it). The upgraded connection is
// hijacked, so the client keeps no idle connection and is garbage once Dial returns.
func corkedClient(cork **corkConn) *http.Client {
	dial := noDelayDialer((&net.Dialer{Timeout: DialTimeout}).DialContext)
	return &http.Client{
		Transport: &http.Transport{
			DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
				nc, err := dial(ctx, network, addr)
				if err != nil {
					return nil, err
				}
				cc := &corkConn{Conn: nc}
				*cork = cc
				return cc, nil
			},
			TLSHandshakeTimeout: DialTimeout,
			ForceAttemptHTTP2:   false,
			Proxy:               nil,
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// noDelayDialer wraps a dial function so TCP connections have TCP_NODELAY set explicitly
// (spec/relay-noise.md §9; Go's default, made explicit so a changed default cannot regress).
func noDelayDialer(dial func(ctx context.Context, network, addr string) (net.Conn, error)) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		if tc, ok := c.(*net.TCPConn); ok {
			if err := tc.SetNoDelay(true); err != nil {
				c.Close()
				return nil, fmt.Errorf("setting TCP_NODELAY: %w", err)
			}
		}
		return c, nil
	}
}
