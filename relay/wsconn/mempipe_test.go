package wsconn_test

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/coder/websocket"

	"github.com/execlab/executor/relay/wsconn"
)

// memPair returns a wsconn.Conn and the raw server websocket at the other end of an
// in-memory net.Pipe: no sockets, so it works inside a testing/synctest bubble (every wait
// is on a channel created in the bubble) and the keepalive timers run on the bubble's fake
// clock. pings counts the Pings the server received (and answered, while it reads).
//
// A silent pair's server end swallows every byte unread, as a peer that never answers
// does over TCP: writes succeed (net.Pipe alone would block them) but no Pong comes back.
func memPair(t *testing.T, opts *wsconn.Options, silent bool) (c *wsconn.Conn, srv *websocket.Conn, pings *atomic.Int32) {
	t.Helper()
	pings = new(atomic.Int32)
	cEnd, sEnd := net.Pipe()
	rt := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		w := &hijackWriter{header: http.Header{}, conn: sEnd}
		var err error
		srv, err = websocket.Accept(w, r, &websocket.AcceptOptions{OnPingReceived: func(context.Context, []byte) bool {
			pings.Add(1)
			return true
		}})
		if err != nil {
			return nil, err
		}
		return &http.Response{StatusCode: w.status, Header: w.header, Body: cEnd, Request: r,
			Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1}, nil
	})
	ws, _, err := websocket.Dial(context.Background(), "ws://relay.test/rendezvous",
		&websocket.DialOptions{HTTPClient: &http.Client{Transport: rt}})
	if err != nil {
		t.Fatalf("dialing the in-memory pair: %v", err)
	}
	if silent {
		go func() { _, _ = io.Copy(io.Discard, sEnd) }() // ends when Cleanup closes the pipe
	}
	c = wsconn.New(ws, opts)
	t.Cleanup(func() {
		c.Close()
		srv.CloseNow()
	})
	return c, srv, pings
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// hijackWriter is the server side of the upgrade: it records the 101 and hands over the
// pipe end, as net/http's Hijack would hand over the TCP connection.
type hijackWriter struct {
	header http.Header
	status int
	conn   net.Conn
}

func (w *hijackWriter) Header() http.Header         { return w.header }
func (w *hijackWriter) Write(b []byte) (int, error) { return len(b), nil }
func (w *hijackWriter) WriteHeader(status int)      { w.status = status }
func (w *hijackWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	return w.conn, bufio.NewReadWriter(bufio.NewReader(w.conn), bufio.NewWriter(w.conn)), nil
}
