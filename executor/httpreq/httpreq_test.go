package httpreq_test

import (
	"context"
	"encoding/base64"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/execlab/executor/executor/httpreq"
	"github.com/execlab/executor/executor/protocol"
	"github.com/execlab/executor/jsonwire"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var ctx = context.Background()

// chanNotifier delivers notifications on a channel (blocking = back-pressure).
type chanNotifier struct{ ch chan *protocol.HTTPBodyDelta }

func (n *chanNotifier) Notify(ctx context.Context, method string, params any) error {
	// A real Notifier encodes params before it returns and the pump reuses its read
	// buffer after that (stream.go), so the fake keeps a copy, as encoding would.
	d := *params.(*protocol.HTTPBodyDelta)
	d.DeltaBase64 = append(d.DeltaBase64[:0:0], d.DeltaBase64...)
	select {
	case n.ch <- &d:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func newClient(t *testing.T, env map[string]string) (*httpreq.Client, *chanNotifier) {
	n := &chanNotifier{ch: make(chan *protocol.HTTPBodyDelta, 4)}
	c := httpreq.New(&httpreq.Options{LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok }}, n)
	t.Cleanup(c.Close)
	return c, n
}

func ptr[T any](v T) *T { return &v }

func wantErr(t *testing.T, what string, err error, code int, msg string) {
	t.Helper()
	var rpc *jsonwire.Error
	if !errors.As(err, &rpc) || rpc.Code != code || !(rpc.Message == msg || strings.HasSuffix(msg, "*") && strings.HasPrefix(rpc.Message, strings.TrimSuffix(msg, "*"))) {
		t.Fatalf("%s: got %v, want %d %q", what, err, code, msg)
	}
}

func TestRequest_BuffersResponseBody(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if r.Method != "POST" || r.Header.Get("X-Test") != "abc123" || string(body) != "request-body" {
			w.WriteHeader(400)
			return
		}
		w.Header().Set("X-Reply", "yes")
		w.WriteHeader(201)
		w.Write([]byte("response-body"))
	}))
	defer srv.Close()
	c, _ := newClient(t, map[string]string{"SECRET": "123"})
	reqBody := jsonwire.Bytes("request-body")
	res, err := c.Request(ctx, &protocol.HTTPRequestParams{
		Method: "POST", URL: srv.URL + "/x", RequestID: "r1",
		Headers:    []protocol.HTTPHeader{{Name: "x-test", Value: "abc", ValueEnvVar: ptr("SECRET")}},
		BodyBase64: &reqBody,
	})
	if err != nil {
		t.Fatal(err)
	}
	r := res.(*protocol.HTTPRequestResult)
	body, _ := base64.StdEncoding.DecodeString(r.BodyBase64)
	var reply string
	for _, h := range r.Headers {
		if h.Name == "x-reply" {
			reply = h.Value
		}
	}
	if r.Status != 201 || string(body) != "response-body" || reply != "yes" {
		t.Fatalf("got status %d body %q x-reply %q, want 201 %q yes", r.Status, body, reply, "response-body")
	}
}

func TestRequest_Validation(t *testing.T) {
	c, _ := newClient(t, map[string]string{"EMPTY": "", "OPENAI_API_KEY": "k"})
	tests := []struct {
		name string
		p    protocol.HTTPRequestParams
		msg  string
	}{
		{"file url", protocol.HTTPRequestParams{Method: "GET", URL: "file:///etc/passwd"}, "http/request only supports http and https URLs, got file"},
		{"relative url", protocol.HTTPRequestParams{Method: "GET", URL: "/x"}, "http/request url is invalid: relative URL without a base"},
		{"bad method", protocol.HTTPRequestParams{Method: "GE T", URL: "http://127.0.0.1/"}, "http/request method is invalid: invalid HTTP method"},
		{"crlf header", protocol.HTTPRequestParams{Method: "GET", URL: "http://127.0.0.1/", Headers: []protocol.HTTPHeader{{Name: "x", Value: "a\r\nInjected: 1"}}}, "http/request header x has an invalid value: failed to parse header value"},
		{"unset var", protocol.HTTPRequestParams{Method: "GET", URL: "http://127.0.0.1/", Headers: []protocol.HTTPHeader{{Name: "x", ValueEnvVar: ptr("NOPE")}}}, "http/request header x requires executor environment variable NOPE"},
		{"empty var", protocol.HTTPRequestParams{Method: "GET", URL: "http://127.0.0.1/", Headers: []protocol.HTTPHeader{{Name: "x", ValueEnvVar: ptr("EMPTY")}}}, "http/request header x requires a non-empty executor environment variable EMPTY"},
		{"denied var", protocol.HTTPRequestParams{Method: "GET", URL: "http://127.0.0.1/", Headers: []protocol.HTTPHeader{{Name: "x", ValueEnvVar: ptr("openai_api_key")}}}, "http/request header x cannot use executor environment variable openai_api_key"},
	}
	for _, tt := range tests {
		_, err := c.Request(ctx, &tt.p)
		wantErr(t, tt.name, err, jsonwire.CodeInvalidParams, tt.msg)
	}
}

func TestRequest_Redirects(t *testing.T) {
	var targetHits int
	var mu sync.Mutex
	mux := http.NewServeMux()
	mux.HandleFunc("/target", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		targetHits++
		mu.Unlock()
		w.Write([]byte("target"))
	})
	mux.HandleFunc("/redirect", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Location", "/target")
		w.WriteHeader(302)
		w.Write([]byte("moved"))
	})
	mux.HandleFunc("/loop", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/loop", http.StatusFound) })
	mux.HandleFunc("/ftp", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "ftp://127.0.0.1/x", http.StatusFound)
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	c, _ := newClient(t, nil)
	res, err := c.Request(ctx, &protocol.HTTPRequestParams{Method: "GET", URL: srv.URL + "/redirect", RedirectPolicy: protocol.HTTPRedirectStop})
	if err != nil {
		t.Fatal(err)
	}
	r := res.(*protocol.HTTPRequestResult)
	body, _ := base64.StdEncoding.DecodeString(r.BodyBase64)
	if r.Status != 302 || string(body) != "moved" || targetHits != 0 {
		t.Fatalf("stop: got %d %q hits=%d, want 302 moved 0", r.Status, body, targetHits)
	}
	res, err = c.Request(ctx, &protocol.HTTPRequestParams{Method: "GET", URL: srv.URL + "/redirect"})
	if err != nil || res.(*protocol.HTTPRequestResult).Status != 200 {
		t.Fatalf("follow: got %v %v, want 200", res, err)
	}
	_, err = c.Request(ctx, &protocol.HTTPRequestParams{Method: "GET", URL: srv.URL + "/loop"})
	wantErr(t, "loop", err, jsonwire.CodeInternal, "http/request failed: too many redirects")
	_, err = c.Request(ctx, &protocol.HTTPRequestParams{Method: "GET", URL: srv.URL + "/ftp"})
	wantErr(t, "ftp", err, jsonwire.CodeInternal, "http/request failed: redirect target uses unsupported URL scheme: ftp")
}

func TestRequest_Timeout(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(100 * time.Millisecond):
		case <-r.Context().Done():
		}
		w.Write([]byte("slow"))
	}))
	defer srv.Close()
	c, _ := newClient(t, nil)
	if _, err := c.Request(ctx, &protocol.HTTPRequestParams{Method: "GET", URL: srv.URL}); err != nil {
		t.Fatalf("no timeout: %v", err)
	}
	_, err := c.Request(ctx, &protocol.HTTPRequestParams{Method: "GET", URL: srv.URL, TimeoutMs: ptr(uint64(10))})
	wantErr(t, "timeout", err, jsonwire.CodeInternal, "http/request failed: *")
}

func TestRequest_StreamsBody(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("hello "))
		w.(http.Flusher).Flush()
		w.Write([]byte("world"))
	}))
	defer srv.Close()
	c, n := newClient(t, nil)
	res, start, err := c.RequestForTest(ctx, &protocol.HTTPRequestParams{Method: "GET", URL: srv.URL, RequestID: "s1", StreamResponse: true})
	if err != nil || start == nil {
		t.Fatalf("got %v start=%v", err, start != nil)
	}
	if res.Status != 200 || res.BodyBase64 != "" {
		t.Fatalf("got %+v, want 200 with empty body", res)
	}
	_, _, err = c.RequestForTest(ctx, &protocol.HTTPRequestParams{Method: "GET", URL: srv.URL, RequestID: "s1", StreamResponse: true})
	wantErr(t, "duplicate", err, jsonwire.CodeInvalidParams, "http/request streamResponse requestId `s1` is already active")
	start()
	var body strings.Builder
	for seq := uint64(1); ; seq++ {
		d := <-n.ch
		if d.Seq != seq || d.RequestID != "s1" {
			t.Fatalf("got seq %d id %q, want %d s1", d.Seq, d.RequestID, seq)
		}
		b := []byte(d.DeltaBase64)
		body.Write(b)
		if d.Done {
			if d.Error != nil || len(b) != 0 {
				t.Fatalf("terminal frame: got error %v delta %q", d.Error, b)
			}
			break
		}
	}
	if body.String() != "hello world" {
		t.Fatalf("got %q, want %q", body.String(), "hello world")
	}
}

// TestRequest_StreamBoundedMemory streams 1 GiB while a slow consumer applies
// back-pressure; the heap must stay far below the body size.
func TestRequest_StreamBoundedMemory(t *testing.T) {
	size := int64(1 << 30)
	if testing.Short() {
		size = 64 << 20
	}
	chunk := make([]byte, 1<<20)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for sent := int64(0); sent < size; sent += int64(len(chunk)) {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	}))
	defer srv.Close()
	c, n := newClient(t, nil)
	_, start, err := c.RequestForTest(ctx, &protocol.HTTPRequestParams{Method: "GET", URL: srv.URL, RequestID: "big", StreamResponse: true})
	if err != nil {
		t.Fatal(err)
	}
	start()
	var total int64
	var peak uint64
	var ms runtime.MemStats
	for i := 0; ; i++ {
		d := <-n.ch
		b := []byte(d.DeltaBase64)
		total += int64(len(b))
		if len(d.DeltaBase64) > base64.StdEncoding.EncodedLen(httpreq.MaxDeltaBytes) {
			t.Fatalf("delta of %d base64 bytes exceeds 1 MiB decoded", len(d.DeltaBase64))
		}
		if i%64 == 0 {
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapInuse)
		}
		if d.Done {
			if d.Error != nil {
				t.Fatalf("stream error: %s", *d.Error)
			}
			break
		}
	}
	if total != size {
		t.Fatalf("got %d bytes, want %d", total, size)
	}
	if peak > 256<<20 {
		t.Fatalf("heap in use peaked at %d MiB, want bounded (< 256 MiB)", peak>>20)
	}
}

func TestClose_CancelsStreams(t *testing.T) {
	block := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("x"))
		w.(http.Flusher).Flush()
		select {
		case <-block:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(block)
	n := &chanNotifier{ch: make(chan *protocol.HTTPBodyDelta)}
	c := httpreq.New(nil, n)
	_, start, err := c.RequestForTest(ctx, &protocol.HTTPRequestParams{Method: "GET", URL: srv.URL, RequestID: "c", StreamResponse: true})
	if err != nil {
		t.Fatal(err)
	}
	start()
	done := make(chan struct{})
	go func() { c.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not return while a stream was blocked")
	}
}

// A streamed body is forwarded as it arrives: the first flushed part is delivered as a
// delta while the upstream still holds the rest back (server-sent events, streamed
// model output), not held until a buffer fills or the body ends.
func TestRequest_StreamsIncrementally(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("data: first\n\n"))
		w.(http.Flusher).Flush()
		select { // hold the rest until the first part has been seen, at most 10 s
		case <-release:
		case <-time.After(10 * time.Second):
		}
		w.Write([]byte("data: second\n\n"))
	}))
	defer srv.Close()
	c, n := newClient(t, nil)
	_, start, err := c.RequestForTest(ctx, &protocol.HTTPRequestParams{Method: "GET", URL: srv.URL, RequestID: "sse", StreamResponse: true})
	if err != nil {
		t.Fatal(err)
	}
	start()
	select {
	case d := <-n.ch:
		if d.Seq != 1 || string(d.DeltaBase64) != "data: first\n\n" || d.Done {
			t.Fatalf("first delta: got seq %d %q done %v, want seq 1 %q", d.Seq, d.DeltaBase64, d.Done, "data: first\n\n")
		}
	case <-time.After(5 * time.Second):
		close(release)
		t.Fatal("no delta within 5 s while the upstream held the rest of the body")
	}
	close(release)
	var rest strings.Builder
	for {
		d := <-n.ch
		rest.Write([]byte(d.DeltaBase64))
		if d.Done {
			break
		}
	}
	if rest.String() != "data: second\n\n" {
		t.Fatalf("rest of the body: got %q", rest.String())
	}
}
