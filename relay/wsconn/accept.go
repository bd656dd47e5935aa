package wsconn

import (
	"bufio"
	"crypto/tls"
	"net"
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
//
// Without TLS the hijacked connection is wrapped in a corkConn that the library writes its
// control frames to, and the Conn writes its binary frames itself (rawframe.go); over TLS, or
// when the connection cannot be hijacked here, the library writes every frame.
func Accept(w http.ResponseWriter, r *http.Request, opts *AcceptOptions) (*Conn, error) {
	var o AcceptOptions
	if opts != nil {
		o = *opts
	}
	var hj *rawHijacker
	if r.TLS == nil {
		hj = &rawHijacker{ResponseWriter: w, rc: http.NewResponseController(w)}
		w = hj
	}
	ws, err := websocket.Accept(w, r, &websocket.AcceptOptions{OriginPatterns: o.OriginPatterns})
	if err != nil {
		return nil, err
	}
	c := New(ws, o.Conn)
	if hj != nil && hj.cork != nil {
		c.cork, c.raw, c.server = hj.cork, true, true
	}
	return c, nil
}

// rawHijacker hands coder/websocket the hijacked connection with its write side going
// through a corkConn, whose lock then orders the library's control frames with the Conn's
// own binary frames. Reads and Close go to the connection directly.
type rawHijacker struct {
	http.ResponseWriter
	rc   *http.ResponseController
	cork *corkConn // set by a Hijack of a plain (non-TLS) connection
}

func (h *rawHijacker) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	nc, brw, err := h.rc.Hijack()
	if err != nil {
		return nil, nil, err
	}
	if _, isTLS := nc.(*tls.Conn); isTLS {
		return nc, brw, nil
	}
	// The upgrade response is out before the writer is moved onto the cork.
	if err := brw.Writer.Flush(); err != nil {
		return nc, brw, nil // the library's first write reports the broken connection
	}
	h.cork = &corkConn{Conn: nc}
	brw.Writer.Reset(h.cork)
	return nc, brw, nil
}

// Unwrap lets http.ResponseController reach the server's writer.
func (h *rawHijacker) Unwrap() http.ResponseWriter { return h.ResponseWriter }
