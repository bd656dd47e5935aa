package registrycmd

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/execlab/executor/registry/rendezvous"
	"github.com/execlab/executor/registry/server"
	"github.com/execlab/executor/relay/wsconn"
	"github.com/execlab/executor/telemetry"
)

// Config configures Start.
type Config struct {
	Listen string // host:port; port 0 picks one
	// PublicURL overrides the base URL clients use (default http(s)://<bound address>).
	PublicURL string
	DB        string // SQLite path or postgres:// DSN
	Tokens    *server.Tokens
	// TLSCertFile and TLSKeyFile, both set, serve HTTPS (PEM certificate chain and key).
	TLSCertFile, TLSKeyFile string
	// HTTP tunes the listener (timeouts, MaxConns); nil means defaults, with MaxConns
	// lowered to the file-descriptor limit minus server.ReservedFDs.
	HTTP *server.HTTPOptions
	Conn *wsconn.Options // rendezvous socket tuning; nil = defaults
	// NodeID names this node among those sharing DB (default: the host name).
	NodeID string
	// AdvertiseURL is the http(s) base URL at which this node alone is reachable (default:
	// the public URL, right for a single node).
	AdvertiseURL string
	// KeyRotation overrides server.KeyRotation (how long one URL signing key signs). Zero
	// means the default.
	KeyRotation time.Duration
	// MaxHarnessSockets and MaxHarnessSocketsPerSubject override the rendezvous's bounds
	// of the same names, for benchmarks that also raise the executor's stream limit. Zero
	// means the defaults.
	MaxHarnessSockets, MaxHarnessSocketsPerSubject int
	Logger                                         *slog.Logger
	// Metrics, when not nil, measures the API and reads the Hub's counters (metrics.go).
	Metrics *Metrics
	// Tracing, when not nil, traces the API endpoints and the rendezvous upgrades
	// (telemetry.Tracing.Middleware).
	Tracing *telemetry.Tracing
}

// Service is a running registry.
type Service struct {
	URL   string // http(s) base URL (the public URL)
	Addr  string // the bound host:port (differs from URL's behind a proxy)
	Hub   *rendezvous.Hub
	Store server.Store
	Node  *server.Node

	srv      *server.HTTPServer
	done     chan error
	stopBeat context.CancelFunc
	beatDone chan struct{}
}

// Start opens the store, binds the listener and serves in a goroutine.
func Start(ctx context.Context, cfg Config) (*Service, error) {
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if (cfg.TLSCertFile == "") != (cfg.TLSKeyFile == "") {
		return nil, errors.New("registry: TLS needs both a certificate and a key file")
	}
	var tlsConf *tls.Config
	if cfg.TLSCertFile != "" {
		cert, err := tls.LoadX509KeyPair(cfg.TLSCertFile, cfg.TLSKeyFile)
		if err != nil {
			return nil, fmt.Errorf("loading TLS certificate: %w", err)
		}
		tlsConf = &tls.Config{Certificates: []tls.Certificate{cert}}
	}
	CheckStoreFile(cfg.DB, log)
	st, err := server.OpenStore(ctx, cfg.DB)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		st.Close()
		return nil, fmt.Errorf("listening on %s: %w", cfg.Listen, err)
	}
	if tlsConf == nil && !Loopback(ln.Addr()) {
		log.Warn("registry listening on a non-loopback address without TLS: bearer tokens and rendezvous URLs cross the network in clear; use --tls-cert/--tls-key or a TLS-terminating proxy",
			"address", ln.Addr().String())
	}
	for _, u := range cfg.Tokens.Unscoped() {
		log.Warn("token file grants a token every "+unscopedWhat(u), "line", u.Line, "token_id", u.ID,
			"implicit", u.Implicit)
	}
	base := cfg.PublicURL
	if base == "" {
		scheme := "http://"
		if tlsConf != nil {
			scheme = "https://"
		}
		base = scheme + ln.Addr().String()
	}
	signer := rendezvous.NewRandomSigner() // replaced by the stored ring in node.Start
	node, err := newNode(cfg, st, signer, base, log)
	if err == nil {
		err = node.Start(ctx)
	}
	if err != nil {
		ln.Close()
		st.Close()
		return nil, err
	}
	hub, err := rendezvous.New(&rendezvous.Options{
		Signer: signer, CurrentGeneration: server.GenerationFunc(st), Conn: cfg.Conn, Logger: log,
		MaxHarnessSockets: cfg.MaxHarnessSockets, MaxHarnessSocketsPerSubject: cfg.MaxHarnessSocketsPerSubject,
		ExecutorAttached: node.Attached, ExecutorDetached: node.Detached,
	})
	if err != nil {
		ln.Close()
		_ = node.Release(ctx)
		st.Close()
		return nil, err
	}
	so := &server.Options{Store: st, Tokens: cfg.Tokens, Hub: hub, Signer: signer, PublicURL: base, Node: node, Logger: log}
	if cfg.Metrics != nil {
		so.Observer = cfg.Metrics.api
	}
	s, err := server.New(so)
	if err != nil {
		ln.Close()
		_ = node.Release(ctx)
		st.Close()
		return nil, err
	}
	var ho server.HTTPOptions
	if cfg.HTTP != nil {
		ho = *cfg.HTTP
	}
	if ho.MaxConns <= 0 {
		ho.MaxConns = defaultMaxConns()
	}
	ho.TLS, ho.Logger = tlsConf, log
	var h http.Handler = s
	if cfg.Metrics != nil {
		h = cfg.Metrics.api.Middleware(s)
		telemetry.RegisterHub(cfg.Metrics.reg, hub.Stats)
		telemetry.RegisterNode(cfg.Metrics.reg, node.Ready)
	}
	if cfg.Tracing != nil {
		h = cfg.Tracing.Middleware(h)
	}
	log.Info("registry listening", "address", ln.Addr().String(), "tls", tlsConf != nil, "max_conns", ho.MaxConns)
	beatCtx, stopBeat := context.WithCancel(context.WithoutCancel(ctx))
	svc := &Service{URL: base, Addr: ln.Addr().String(), Hub: hub, Store: st, Node: node, done: make(chan error, 1), srv: server.NewHTTPServer(h, &ho),
		stopBeat: stopBeat, beatDone: make(chan struct{})}
	go func() { defer close(svc.beatDone); node.Run(beatCtx, hub.CloseExecutor) }()
	go func() { svc.done <- svc.srv.Serve(ln) }()
	return svc, nil
}

// newNode returns the service's registry node: NodeID defaults to the host name,
// AdvertiseURL to base.
func newNode(cfg Config, st server.Store, signer *rendezvous.Signer, base string, log *slog.Logger) (*server.Node, error) {
	id := cfg.NodeID
	if id == "" {
		h, err := os.Hostname()
		if err != nil || h == "" {
			h = "registry"
		}
		id = h
	}
	adv := cfg.AdvertiseURL
	if adv == "" {
		adv = base
	}
	no := &server.NodeOptions{NodeID: id, AdvertiseURL: adv, KeyRotation: cfg.KeyRotation, Logger: log}
	if cfg.Metrics != nil {
		no.Observer = cfg.Metrics.api
	}
	return server.NewNode(st, signer, no)
}

func unscopedWhat(u server.UnscopedToken) string {
	switch {
	case u.AllRoles && u.AllEnvs:
		return "role in every environment (add roles= and envs=; `executor registry token` writes scoped lines)"
	case u.AllRoles:
		return "role (add roles=executor or roles=harness)"
	default:
		return "environment (add envs=…)"
	}
}

// defaultMaxConns is server.MaxConns, lowered so that the connections plus
// server.ReservedFDs fit the process's file-descriptor limit.
func defaultMaxConns() int {
	n := server.MaxConns
	if lim, ok := fdLimit(); ok {
		n = min(n, max(int(lim)-server.ReservedFDs, minConns))
	}
	return n
}

// minConns is the least MaxConns under a tiny file-descriptor limit: enough for an
// executor, a few harnesses and registry calls.
const minConns = 16

// Loopback reports whether addr is a loopback address (127.0.0.0/8, ::1).
func Loopback(addr net.Addr) bool {
	tcp, ok := addr.(*net.TCPAddr)
	return ok && tcp.IP.IsLoopback()
}

// CheckTokenFile warns when the token file at path is readable by group or others: it
// holds bearer secrets (lines naming tokens by "sha256:" hash alone hold none, but the
// file may mix both).
func CheckTokenFile(path string, log *slog.Logger) {
	fi, err := os.Stat(path)
	if err != nil {
		return // LoadTokens reports it
	}
	if perm := fi.Mode().Perm(); perm&0o044 != 0 {
		log.Warn("token file is readable by group or others; chmod 600 it", "path", path,
			"mode", fmt.Sprintf("%#o", perm))
	}
}

// CheckStoreFile warns when the SQLite store at dsn, or its -wal or -shm file, exists with
// any permission for group or others: it holds the URL signing keys, with which a reader
// can mint rendezvous URLs (and a writer plant its own key). A new store is created 0600
// (server.OpenStore); an existing one keeps its mode, hence the warning. PostgreSQL DSNs
// and ":memory:" are not files.
func CheckStoreFile(dsn string, log *slog.Logger) {
	if dsn == "" || dsn == ":memory:" || strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		return
	}
	for _, p := range []string{dsn, dsn + "-wal", dsn + "-shm"} {
		fi, err := os.Stat(p)
		if err != nil {
			continue // absent (OpenStore creates or reports it)
		}
		if perm := fi.Mode().Perm(); perm&0o077 != 0 {
			log.Warn("registry database is accessible to group or others and holds the URL signing keys; chmod 600 it",
				"path", p, "mode", fmt.Sprintf("%#o", perm))
		}
	}
}

// Close stops the listener, closes every rendezvous socket, waits for the server goroutine
// and closes the store.
func (s *Service) Close() error {
	s.stopBeat()
	<-s.beatDone
	// Released first: the sockets the shutdown closes leave their locations to this one
	// delete, and other nodes stop handing this node out at once.
	err := s.Node.Release(context.Background())
	if cerr := s.srv.Close(); err == nil { // closes listeners and idle conns; hijacked sockets are the hub's
		err = cerr
	}
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
