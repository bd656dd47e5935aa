package conformance_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"strconv"
	"strings"
	"time"
)

// httpFixture is the loopback HTTP fixture: the server at URL (${HTTP}) and a second
// server on another port, the other origin that cross-origin redirects reach.
type httpFixture struct {
	URL         string
	main, other *httptest.Server
}

// Close stops both servers.
func (f *httpFixture) Close() {
	f.main.Close()
	f.other.Close()
}

// sensitiveHeaders are the request headers a redirect to another origin must not carry
// (the reference drops them when host, port or scheme changes); /authecho reports them.
var sensitiveHeaders = []string{"Authorization", "Cookie", "Cookie2", "Proxy-Authorization", "Www-Authenticate", "X-Keep"}

// authEcho reports which sensitive headers arrived, one "name: value" line each.
func authEcho(w http.ResponseWriter, r *http.Request) {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s\n", r.Method, r.URL.RequestURI())
	for _, k := range sensitiveHeaders {
		if v, ok := r.Header[k]; ok {
			fmt.Fprintf(&b, "%s: %s\n", k, strings.Join(v, ","))
		}
	}
	w.Header()["Date"] = nil
	w.Header().Set("Content-Type", "text/plain")
	io.WriteString(w, b.String())
}

// redirectTo answers 302 to the location loc returns.
func redirectTo(loc func(r *http.Request) string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header()["Date"] = nil
		w.Header().Set("Location", loc(r))
		w.WriteHeader(302)
	}
}

// newHTTPFixture serves the endpoints the http/request scenarios use, on loopback.
// Responses are deterministic (no Date header) so transcripts compare.
func newHTTPFixture() *httpFixture {
	f := &httpFixture{}
	otherMux := http.NewServeMux()
	otherMux.HandleFunc("/authecho", authEcho)
	otherMux.Handle("/back", redirectTo(func(*http.Request) string { return f.main.URL + "/authecho" }))
	f.other = httptest.NewServer(otherMux)

	mux := http.NewServeMux()
	// Redirects for the sensitive-header scenarios: same origin, another port, another
	// host (localhost for 127.0.0.1, same port), and another port then back.
	mux.HandleFunc("/authecho", authEcho)
	mux.Handle("/to-same", redirectTo(func(*http.Request) string { return "/authecho" }))
	mux.Handle("/to-port", redirectTo(func(*http.Request) string { return f.other.URL + "/authecho" }))
	mux.Handle("/to-host", redirectTo(func(r *http.Request) string {
		_, port, _ := strings.Cut(r.Host, ":")
		return "http://localhost:" + port + "/authecho"
	}))
	// /hops?n=N redirects N times, then answers 200: how many redirects "follow" follows.
	mux.HandleFunc("/hops", func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.URL.Query().Get("n"))
		w.Header()["Date"] = nil
		if n > 0 {
			w.Header().Set("Location", "/hops?n="+strconv.Itoa(n-1))
			w.WriteHeader(302)
			return
		}
		io.WriteString(w, "arrived")
	})
	mux.Handle("/to-port-and-back", redirectTo(func(*http.Request) string { return f.other.URL + "/back" }))
	mux.HandleFunc("/echo", func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var names []string
		for k := range r.Header {
			if strings.HasPrefix(k, "X-") {
				names = append(names, k)
			}
		}
		sort.Strings(names)
		var b strings.Builder
		fmt.Fprintf(&b, "%s %s\n", r.Method, r.URL.RequestURI())
		for _, k := range names {
			fmt.Fprintf(&b, "%s: %s\n", k, strings.Join(r.Header[k], ","))
		}
		b.Write(body)
		w.Header()["Date"] = nil
		w.Header().Set("Content-Type", "text/plain")
		w.Header().Set("X-Reply", "yes")
		w.WriteHeader(201)
		io.WriteString(w, b.String())
	})
	mux.HandleFunc("/redirect", func(w http.ResponseWriter, r *http.Request) {
		w.Header()["Date"] = nil
		w.Header().Set("Location", "/echo")
		w.WriteHeader(302)
		io.WriteString(w, "moved")
	})
	mux.HandleFunc("/loop", func(w http.ResponseWriter, r *http.Request) {
		w.Header()["Date"] = nil
		w.Header().Set("Location", "/loop")
		w.WriteHeader(302)
	})
	mux.HandleFunc("/badscheme", func(w http.ResponseWriter, r *http.Request) {
		w.Header()["Date"] = nil
		w.Header().Set("Location", "ftp://127.0.0.1/x")
		w.WriteHeader(302)
	})
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(300 * time.Millisecond)
		w.Header()["Date"] = nil
		io.WriteString(w, "slow")
	})
	mux.HandleFunc("/stream", func(w http.ResponseWriter, r *http.Request) {
		w.Header()["Date"] = nil
		w.Header().Set("Content-Type", "text/plain")
		fl := w.(http.Flusher)
		io.WriteString(w, "hello")
		fl.Flush()
		time.Sleep(50 * time.Millisecond)
		io.WriteString(w, " world")
	})
	mux.HandleFunc("/drip", func(w http.ResponseWriter, r *http.Request) {
		// Two flushed parts 300 ms apart: a streaming executor forwards the first before
		// the second exists (server-sent events, streamed model output).
		w.Header()["Date"] = nil
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "data: first\n\n")
		w.(http.Flusher).Flush()
		time.Sleep(300 * time.Millisecond)
		io.WriteString(w, "data: second\n\n")
	})
	mux.HandleFunc("/trickle", func(w http.ResponseWriter, r *http.Request) {
		w.Header()["Date"] = nil
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(200)
		w.(http.Flusher).Flush()
		time.Sleep(400 * time.Millisecond)
		io.WriteString(w, "late body")
	})
	f.main = httptest.NewServer(mux)
	f.URL = f.main.URL
	return f
}
