// Package registrycmd composes the self-hosted registry service (`executor registry serve`,
// and embedded by `executor dev`): store, tokens, URL signer, rendezvous hub and registry
// server on one HTTP listener.
//
// Ownership: Start starts the HTTP server goroutine; Service.Close stops it (closing every
// rendezvous socket), waits for it and closes the store.
package registrycmd

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/execlab/executor/registry/rendezvous"
	"github.com/execlab/executor/registry/server"
	"github.com/execlab/executor/relay/wsconn"
)

// Config configures Start.
type Config struct {
	Listen string // host:port; port 0 picks one
	// PublicURL overrides the base URL clients use (default http://<bound address>).
	PublicURL string
	DB        string // SQLite path or postgres:// DSN
	Tokens    *server.Tokens
	Conn      *wsconn.Options // rendezvous socket tuning; nil = defaults
	Logger    *slog.Logger
}

// Service is a running registry.
type Service struct {
	URL   string // http base URL
	Hub   *rendezvous.Hub
	Store server.Store

	srv  *http.Server
	done chan error
}

// Start opens the store, binds the listener and serves in a goroutine.
func Start(ctx context.Context, cfg Config) (*Service, error) {
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	st, err := server.OpenStore(ctx, cfg.DB)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		st.Close()
		return nil, fmt.Errorf("listening on %s: %w", cfg.Listen, err)
	}
	base := cfg.PublicURL
	if base == "" {
		base = "http://" + ln.Addr().String()
	}
	signer := rendezvous.NewRandomSigner()
	hub, err := rendezvous.New(&rendezvous.Options{
		Signer: signer, CurrentGeneration: server.GenerationFunc(st), Conn: cfg.Conn, Logger: log,
	})
	if err != nil {
		ln.Close()
		st.Close()
		return nil, err
	}
	s, err := server.New(&server.Options{Store: st, Tokens: cfg.Tokens, Hub: hub, Signer: signer, PublicURL: base, Logger: log})
	if err != nil {
		ln.Close()
		st.Close()
		return nil, err
	}
	svc := &Service{URL: base, Hub: hub, Store: st, done: make(chan error, 1),
		srv: &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second, ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelDebug)}}
	go func() { svc.done <- svc.srv.Serve(ln) }()
	return svc, nil
}

// Close stops the listener, closes every rendezvous socket, waits for the server goroutine
// and closes the store.
func (s *Service) Close() error {
	err := s.srv.Close() // closes listeners and idle conns; hijacked sockets are the hub's
	s.Hub.Close()
	if serr := <-s.done; !errors.Is(serr, http.ErrServerClosed) && err == nil {
		err = serr
	}
	if cerr := s.Store.Close(); err == nil {
		err = cerr
	}
	return err
}

// Run starts the service, calls ready with its URL, and serves until ctx is done.
func Run(ctx context.Context, cfg Config, ready func(url string)) error {
	svc, err := Start(ctx, cfg)
	if err != nil {
		return err
	}
	ready(svc.URL)
	<-ctx.Done()
	return svc.Close()
}
