package conformance_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"time"
)

// newHTTPFixture serves the endpoints the http/request scenarios use, on loopback.
// Responses are deterministic (no Date header) so transcripts compare.
func newHTTPFixture() *httptest.Server {
	mux := http.NewServeMux()
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
	return httptest.NewServer(mux)
}
