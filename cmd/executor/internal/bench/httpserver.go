package bench

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
)

// httpServer is the loopback HTTP server http_stream_local fetches from, run in the bench
// process for the whole Run. GET /body?n=N answers N bytes of pattern repeated from offset
// 0, with a Content-Length.
type httpServer struct {
	url     string // http://127.0.0.1:PORT
	pattern []byte
	srv     *http.Server
	// done is closed when the Serve goroutine (owned by the server, stopped by close) has
	// returned.
	done chan struct{}
}

// httpServerFor returns the run's server, starting it on first use.
func (e *Env) httpServerFor() (*httpServer, error) {
	if e.httpSrv != nil {
		return e.httpSrv, nil
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("starting HTTP server: %w", err)
	}
	s := &httpServer{url: "http://" + ln.Addr().String(), pattern: make([]byte, httpPatternBytes), done: make(chan struct{})}
	_, _ = rand.NewChaCha8([32]byte{'h', 't', 't', 'p'}).Read(s.pattern)
	s.srv = &http.Server{Handler: http.HandlerFunc(s.serveBody), ReadHeaderTimeout: callTimeout}
	go func() { // owner: s.close
		defer close(s.done)
		_ = s.srv.Serve(ln)
	}()
	e.httpSrv = s
	e.onClose(s.close)
	return s, nil
}

func (s *httpServer) serveBody(w http.ResponseWriter, r *http.Request) {
	n, err := strconv.ParseInt(r.URL.Query().Get("n"), 10, 64)
	if r.URL.Path != "/body" || err != nil || n < 0 {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Length", strconv.FormatInt(n, 10))
	for off := int64(0); off < n; {
		p := off % int64(len(s.pattern))
		k := min(n-off, int64(httpWriteChunk), int64(len(s.pattern))-p)
		if _, err := w.Write(s.pattern[p : p+k]); err != nil {
			return // the executor went away; nothing to report to it
		}
		off += k
	}
}

// check compares b with the body's bytes at offset off.
func (s *httpServer) check(b []byte, off int64) error {
	for len(b) > 0 {
		p := off % int64(len(s.pattern))
		k := min(int64(len(b)), int64(len(s.pattern))-p)
		if !bytes.Equal(b[:k], s.pattern[p:p+k]) {
			return fmt.Errorf("%w: body bytes %d…%d differ", errDataLoss, off, off+k-1)
		}
		b, off = b[k:], off+k
	}
	return nil
}

// close stops the server and waits for its Serve goroutine.
func (s *httpServer) close() {
	_ = s.srv.Close() // a loopback listener: a close error leaves nothing to clean up
	<-s.done
}
