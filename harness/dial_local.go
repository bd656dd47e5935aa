package harness

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"

	"github.com/coder/websocket"

	"github.com/execlab/executor/internal/wsmsg"
)

// DialLocal connects to an executor's local WebSocket listener (the ws://IP:PORT line
// `executor serve` and `codex exec-server` print) and starts a Client on it. The
// handshake carries no Origin header (the executor refuses any) and, with
// opts.AuthBearerToken, an Authorization header; a listener refusing it answers 401 and
// the error names the status (never the token). ctx bounds the dial only. opts may be
// nil. The caller still has to call Initialize.
func DialLocal(ctx context.Context, rawURL string, opts *Options) (*Client, error) {
	o := opts.withDefaults()
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("parsing executor URL: %w", err)
	}
	if u.Scheme != "ws" && u.Scheme != "wss" {
		return nil, fmt.Errorf("parsing executor URL: scheme %q, want ws or wss", u.Scheme)
	}
	hdr := http.Header{}
	if tok := strings.TrimSpace(o.AuthBearerToken); tok != "" {
		hdr.Set("Authorization", "Bearer "+tok)
	}
	var raw atomic.Pointer[batchConn]
	c, resp, err := websocket.Dial(ctx, rawURL, &websocket.DialOptions{HTTPHeader: hdr, HTTPClient: batchingHTTPClient(&raw)})
	if resp != nil && resp.Body != nil {
		resp.Body.Close()
	}
	if err != nil {
		return nil, fmt.Errorf("dialing executor: %w", err)
	}
	c.SetReadLimit(o.ReadLimit)
	if bc := raw.Load(); bc != nil {
		return Open(&batchedWS{Conn: wsmsg.New(c), raw: bc}, opts), nil
	}
	return Open(wsmsg.New(c), opts), nil
}
