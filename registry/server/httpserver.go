package server

import (
	"crypto/tls"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/execlab/executor/internal/connlimit"
)

// HTTPOptions tune the HTTP layer that serves a Server (NewHTTPServer). Nil means
// defaults; the struct is never mutated.
type HTTPOptions struct {
	// MaxConns bounds the open connections, HTTP and rendezvous websockets alike (see
	// internal/connlimit for the eviction policy). Default MaxConns; callers that know the
	// process's file-descriptor limit pass less (registrycmd does).
	MaxConns int
	// ReadHeaderTimeout, ReadTimeout, WriteTimeout and IdleTimeout override the defaults
	// of the same names. Zero means the default.
	ReadHeaderTimeout, ReadTimeout, WriteTimeout, IdleTimeout time.Duration
	// TLS, when non-nil, serves HTTPS with this configuration (certificates required);
	// only HTTP/1.1 is offered (the rendezvous upgrades need it). Nil serves plain HTTP.
	TLS *tls.Config
	// Logger receives net/http's own errors at debug. Nil discards.
	Logger *slog.Logger
}

// HTTPServer is the registry's HTTP listener: timeouts on every request (the rendezvous
// upgrades lose them at the hijack, which clears deadlines), a header size bound, an idle
// timeout, an optional TLS layer and a connection cap that evicts idle connections first.
// Serve runs on the caller's goroutine; Close stops it. Safe for concurrent use.
type HTTPServer struct {
	srv *http.Server
	lim *connlimit.Limiter
	tls *tls.Config
}

// NewHTTPServer returns an HTTPServer for h. It starts nothing.
func NewHTTPServer(h http.Handler, opts *HTTPOptions) *HTTPServer {
	var o HTTPOptions
	if opts != nil {
		o = *opts
	}
	def := func(v *time.Duration, d time.Duration) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&o.ReadHeaderTimeout, ReadHeaderTimeout)
	def(&o.ReadTimeout, ReadTimeout)
	def(&o.WriteTimeout, WriteTimeout)
	def(&o.IdleTimeout, IdleTimeout)
	if o.MaxConns <= 0 {
		o.MaxConns = MaxConns
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	lim := connlimit.New(o.MaxConns)
	s := &HTTPServer{lim: lim, srv: &http.Server{
		Handler:           h,
		ReadHeaderTimeout: o.ReadHeaderTimeout,
		ReadTimeout:       o.ReadTimeout,
		WriteTimeout:      o.WriteTimeout,
		IdleTimeout:       o.IdleTimeout,
		MaxHeaderBytes:    MaxHeaderBytes,
		ConnState:         lim.ConnState,
		ErrorLog:          slog.NewLogLogger(o.Logger.Handler(), slog.LevelDebug),
		// No HTTP/2: the rendezvous upgrades are HTTP/1.1 websockets, and the registry's
		// clients speak HTTP/1.1 (spec/registry-auth.md §2.2).
		TLSNextProto: map[string]func(*http.Server, *tls.Conn, http.Handler){},
	}}
	if o.TLS != nil {
		c := o.TLS.Clone()
		c.NextProtos = []string{"http/1.1"}
		if c.MinVersion == 0 {
			c.MinVersion = tls.VersionTLS12
		}
		s.tls = c
	}
	return s
}

// Serve accepts connections on ln until Close; it returns http.ErrServerClosed then.
func (s *HTTPServer) Serve(ln net.Listener) error {
	l := s.lim.Listener(ln)
	if s.tls != nil {
		l = tls.NewListener(l, s.tls)
	}
	return s.srv.Serve(l)
}

// Close closes the listener and every connection net/http still owns; hijacked ones
// (rendezvous sockets) belong to the Hub.
func (s *HTTPServer) Close() error {
	return s.srv.Close() // closes the limiter's listener, which stops waiting Accepts
}

// OpenConns returns the connections currently counted against MaxConns.
func (s *HTTPServer) OpenConns() int { return s.lim.Open() }
