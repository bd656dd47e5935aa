package rendezvous_test

import (
	"net"
	"net/http"
	"testing"
)

// loopbackServer serves a handler on 127.0.0.1 with a plain http.Server (no httptest
// bookkeeping per connection, so memory measurements see only the hub).
type loopbackServer struct {
	base string
	srv  *http.Server
	done chan struct{}
}

func newLoopbackServer(tb testing.TB, h http.Handler) *loopbackServer {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	s := &loopbackServer{base: "ws://" + ln.Addr().String(), srv: &http.Server{Handler: h}, done: make(chan struct{})}
	go func() { defer close(s.done); _ = s.srv.Serve(ln) }()
	return s
}

func (s *loopbackServer) close() {
	s.srv.Close()
	<-s.done
}
