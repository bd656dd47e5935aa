package telemetry

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// readHeaderTimeout bounds a scraper's request headers (implementation choice: a scrape
// is one small GET; slowloris protection as on every other listener).
const readHeaderTimeout = 10 * time.Second

// NewRegistry returns a Prometheus registry holding the Go runtime and process collectors.
func NewRegistry() *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return reg
}

// Server is a running metrics listener. Close stops it.
type Server struct {
	srv  *http.Server
	ln   net.Listener
	done chan error
}

// Start binds addr ("HOST:PORT"; ":PORT" means 127.0.0.1:PORT) and serves g's metrics on
// GET /metrics in a goroutine owned by the returned Server.
func Start(addr string, g prometheus.Gatherer, log *slog.Logger) (*Server, error) {
	if strings.HasPrefix(addr, ":") {
		addr = "127.0.0.1" + addr
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listening for metrics on %s: %w", addr, err)
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if tcp, ok := ln.Addr().(*net.TCPAddr); ok && !tcp.IP.IsLoopback() {
		log.Warn("metrics listening on a non-loopback address", "address", ln.Addr().String())
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(g, promhttp.HandlerOpts{
		ErrorLog:            slogErrorLog{log},
		MaxRequestsInFlight: 4,
		Timeout:             readHeaderTimeout,
	}))
	s := &Server{
		srv:  &http.Server{Handler: mux, ReadHeaderTimeout: readHeaderTimeout},
		ln:   ln,
		done: make(chan error, 1),
	}
	go func() { s.done <- s.srv.Serve(ln) }()
	log.Info("metrics listening", "address", ln.Addr().String())
	return s, nil
}

// Addr is the bound address ("127.0.0.1:9090").
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Close stops the listener and waits for the serving goroutine.
func (s *Server) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	err := s.srv.Shutdown(ctx)
	if serr := <-s.done; !errors.Is(serr, http.ErrServerClosed) && err == nil {
		err = serr
	}
	return err
}

// slogErrorLog adapts the logger to promhttp's error log.
type slogErrorLog struct{ log *slog.Logger }

func (l slogErrorLog) Println(v ...any) { l.log.Warn("serving metrics", "error", fmt.Sprint(v...)) }
