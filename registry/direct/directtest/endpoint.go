package directtest

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/coder/websocket"
)

// Request is what the endpoint saw of one request, normalized for comparison: header names
// lower case, the per-request values (date, signature, websocket key) replaced by
// placeholders.
type Request struct {
	Method, Path, Query string
	// Header maps lower-case names to their normalized values.
	Header map[string]string
	Body   string
	// Status is the status the endpoint answered (101 for an accepted upgrade).
	Status int
}

// Endpoint is a registry + WebSocket front on 127.0.0.1 that verifies SigV4 on both.
type Endpoint struct {
	URL      string // base URL, http://127.0.0.1:port
	Verifier *Verifier
	srv      *httptest.Server
	onConn   func(ctx context.Context, c *websocket.Conn)

	mu       sync.Mutex // guards requests: handlers run on net/http's goroutines
	requests []Request
}

// NewEndpoint starts the endpoint; it is closed by t.Cleanup. onConn serves each accepted
// WebSocket (as the harness would) and returns when done; nil closes the socket at once.
// The registration answers url ws://127.0.0.1:port/ws/{environment id}?stage=test.
func NewEndpoint(t testing.TB, v *Verifier, onConn func(ctx context.Context, c *websocket.Conn)) *Endpoint {
	e := &Endpoint{Verifier: v, onConn: onConn}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	e.srv = httptest.NewUnstartedServer(http.HandlerFunc(e.serveHTTP))
	e.srv.Listener.Close()
	e.srv.Listener = l
	e.srv.Start()
	e.URL = e.srv.URL
	t.Cleanup(func() {
		e.srv.CloseClientConnections()
		e.srv.Close()
	})
	return e
}

// Requests returns a copy of the requests seen so far.
func (e *Endpoint) Requests() []Request {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]Request(nil), e.requests...)
}

func (e *Endpoint) record(r *http.Request, body []byte, status int) {
	h := map[string]string{}
	for k, vs := range r.Header {
		k = strings.ToLower(k)
		v := strings.Join(vs, ",")
		switch k {
		case "x-amz-date":
			v = "<date>"
		case "sec-websocket-key":
			v = "<key>"
		case "authorization":
			if i := strings.Index(v, "Signature="); i >= 0 {
				v = v[:i] + "Signature=<sig>"
			}
			v = strings.Replace(v, r.Header.Get("X-Amz-Date")[:min(8, len(r.Header.Get("X-Amz-Date")))], "<day>", 1)
		}
		h[k] = v
	}
	h["host"] = "<host>"
	e.mu.Lock()
	e.requests = append(e.requests, Request{Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery, Header: h, Body: string(body), Status: status})
	e.mu.Unlock()
}

func (e *Endpoint) serveHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err := e.Verifier.Verify(r, body); err != nil {
		e.record(r, body, http.StatusForbidden)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusForbidden)
		_ = json.NewEncoder(w).Encode(map[string]string{"message": err.Error()})
		return
	}
	const prefix = "/cloud/environment/"
	switch {
	case r.Method == http.MethodPost && strings.HasPrefix(r.URL.Path, prefix) && strings.HasSuffix(r.URL.Path, "/direct/register"):
		env := strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, prefix), "/direct/register")
		var req map[string]any
		if json.Unmarshal(body, &req) != nil || req["transport"] != "direct_jsonrpc_v1" || len(req) != 1 {
			e.record(r, body, http.StatusBadRequest)
			http.Error(w, `{"message":"bad registration body"}`, http.StatusBadRequest)
			return
		}
		e.record(r, body, http.StatusOK)
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]string{
			"environment_id": env, "transport": "direct_jsonrpc_v1", "registration_id": "reg-" + env,
			"url": "ws://" + r.Host + "/ws/" + env + "?stage=test",
		})
	case r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/ws/"):
		e.record(r, body, http.StatusSwitchingProtocols)
		c, err := websocket.Accept(w, r, &websocket.AcceptOptions{CompressionMode: websocket.CompressionDisabled})
		if err != nil {
			return
		}
		defer c.CloseNow()
		if e.onConn != nil {
			e.onConn(r.Context(), c)
		}
		_ = c.Close(websocket.StatusNormalClosure, "")
	default:
		e.record(r, body, http.StatusNotFound)
		http.NotFound(w, r)
	}
}

// SortedHeaderNames lists a request's header names, sorted.
func (r Request) SortedHeaderNames() []string {
	var ks []string
	for k := range r.Header {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}
