package wsconn

import (
	"net/http"

	"github.com/coder/websocket"
)

// AcceptOptions configures Accept. Nil means defaults; it is never mutated.
type AcceptOptions struct {
	// Conn tunes the returned Conn. Nil means defaults.
	Conn *Options
	// OriginPatterns is passed to coder/websocket (nil: only same-origin browsers; non-browser
	// clients send no Origin and are always accepted).
	OriginPatterns []string
}

// Accept upgrades an HTTP request to a relay websocket (the rendezvous side). On failure
// coder/websocket has already written an HTTP error response. Accepted TCP connections keep
// Go's default TCP_NODELAY.
func Accept(w http.ResponseWriter, r *http.Request, opts *AcceptOptions) (*Conn, error) {
	var o AcceptOptions
	if opts != nil {
		o = *opts
	}
	ws, err := websocket.Accept(w, r, &websocket.AcceptOptions{OriginPatterns: o.OriginPatterns})
	if err != nil {
		return nil, err
	}
	return New(ws, o.Conn), nil
}
