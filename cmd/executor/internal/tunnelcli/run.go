package tunnelcli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/execlab/executor/executor/protocol"
	"github.com/execlab/executor/harness"
)

// ErrUnsupported is returned by Run when the executor does not advertise tcpTunnel (a
// released codex exec-server, or one started with --tunnel-allow none).
var ErrUnsupported = errors.New("the executor does not support tunnels (a released codex exec-server, or one started with --tunnel-allow none)")

// ErrListenUnsupported is returned by Run when -R is given and the executor does not
// advertise tcpTunnelListen (a released codex exec-server, an executor without remote
// listeners, or one started with --tunnel-listen-allow none).
var ErrListenUnsupported = errors.New("the executor does not support remote listeners (-R): a released codex exec-server, an older executor, or one started with --tunnel-listen-allow none")

// Implementation limits.
const (
	// ConnectWait bounds how long a connection accepted while the session is being
	// re-established waits for it before it is closed.
	ConnectWait = 30 * time.Second
	// redialMin and redialMax bound the back-off between session dials after a failed
	// recovery.
	redialMin = 500 * time.Millisecond
	redialMax = 10 * time.Second
)

// Config is one `executor tunnel` run.
type Config struct {
	// URL of a local `executor serve` (with AuthBearerToken), or Registry +
	// EnvironmentID + Token.
	URL, AuthBearerToken           string
	Registry, EnvironmentID, Token string
	// ReconnectTimeout is the harness's recovery window through a registry.
	ReconnectTimeout time.Duration
	Locals           []Forward
	Socks            []string // listen addresses
	Remotes          []Remote // -R: listeners on the executor's host
	// Logger receives the log lines (connections reset, reconnects); nil discards.
	Logger *slog.Logger
	// Ready, when set, is called once every listener is bound and the session is up,
	// with the listeners' addresses in order (-L first, then -D, then -R: the bound
	// address on the executor's host). For tests.
	Ready func(addrs []net.Addr)
}

// Run binds the listeners, connects, and serves until ctx ends (nil) or the first
// connection fails (its error; ErrUnsupported when the executor has no tunnels).
func Run(ctx context.Context, cfg Config) error {
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	log = log.With("component", "tunnel")
	var lns []net.Listener
	closeAll := func() {
		for _, ln := range lns {
			_ = ln.Close()
		}
	}
	for _, f := range cfg.Locals {
		ln, err := net.Listen("tcp", f.Bind)
		if err != nil {
			closeAll()
			return fmt.Errorf("-L listening on %s: %w", f.Bind, err)
		}
		lns = append(lns, ln)
	}
	for _, a := range cfg.Socks {
		ln, err := net.Listen("tcp", a)
		if err != nil {
			closeAll()
			return fmt.Errorf("-D listening on %s: %w", a, err)
		}
		lns = append(lns, ln)
	}
	defer closeAll()
	s := &session{cfg: cfg, log: log, ready: make(chan struct{})}
	c, err := s.dial(ctx)
	if err != nil {
		return err
	}
	s.set(c)
	var remotes []*harness.TunnelListener
	for _, r := range cfg.Remotes {
		ln, err := c.ListenTCP(ctx, r.BindHost, r.BindPort)
		if err != nil {
			for _, ln := range remotes {
				_ = ln.Close()
			}
			_ = c.Close()
			return fmt.Errorf("-R listening on %s on the executor's host: %w", r.Bind(), err)
		}
		remotes = append(remotes, ln)
	}

	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer func() {
		cancel()
		closeAll()
		wg.Wait()
		if c := s.current(); c != nil {
			_ = c.Close()
		}
	}()
	wg.Add(1)
	go func() { defer wg.Done(); s.routineRedial(ctx) }()
	for i, ln := range lns {
		wg.Add(1)
		var handle func(context.Context, net.Conn)
		if i < len(cfg.Locals) {
			f := cfg.Locals[i]
			handle = func(ctx context.Context, lc net.Conn) { s.forward(ctx, lc, f.Host, f.Port, nil) }
			log.Info("forwarding", "listen", ln.Addr().String(), "destination", socksDest(f.Host, f.Port))
		} else {
			handle = s.socks
			log.Info("SOCKS5 listening", "listen", ln.Addr().String())
		}
		go func() { defer wg.Done(); s.routineAccept(ctx, ln, handle) }()
	}
	for i, r := range cfg.Remotes {
		if r.BindPort == 0 { // as ssh's "Allocated port": the user needs it
			log.Warn("-R: allocated port on the executor's host", "listen_on_executor", remotes[i].Addr().String(), "destination", socksDest(r.Host, r.Port))
		} else {
			log.Info("remote forwarding", "listen_on_executor", remotes[i].Addr().String(), "destination", socksDest(r.Host, r.Port))
		}
		wg.Add(1)
		go func() { defer wg.Done(); s.routineRemote(ctx, r, remotes[i]) }()
	}
	if cfg.Ready != nil {
		addrs := make([]net.Addr, 0, len(lns)+len(remotes))
		for _, ln := range lns {
			addrs = append(addrs, ln.Addr())
		}
		for _, ln := range remotes {
			addrs = append(addrs, ln.Addr())
		}
		cfg.Ready(addrs)
	}
	<-ctx.Done()
	return nil
}

// session holds the current harness client and re-dials it when it ends.
type session struct {
	cfg Config
	log *slog.Logger

	// mu guards c and ready: ready is closed while c is usable, replaced while
	// re-dialling.
	mu    sync.Mutex
	c     *harness.Client
	ready chan struct{}
}

func (s *session) set(c *harness.Client) {
	s.mu.Lock()
	s.c = c
	close(s.ready)
	s.mu.Unlock()
}

func (s *session) current() *harness.Client {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.c
}

// client waits (≤ ConnectWait) for a live client.
func (s *session) client(ctx context.Context) (*harness.Client, error) {
	s.mu.Lock()
	ready, c := s.ready, s.c
	s.mu.Unlock()
	select {
	case <-ready:
		return c, nil
	default:
	}
	t := time.NewTimer(ConnectWait)
	defer t.Stop()
	select {
	case <-ready:
		return s.current(), nil
	case <-t.C:
		return nil, errors.New("no connection to the executor")
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// dial connects, initializes and checks the capability.
func (s *session) dial(ctx context.Context) (*harness.Client, error) {
	copts := &harness.Options{Logger: s.cfg.Logger}
	var c *harness.Client
	var err error
	if s.cfg.URL != "" {
		lopts := *copts
		lopts.AuthBearerToken = s.cfg.AuthBearerToken
		c, err = harness.DialLocal(ctx, s.cfg.URL, &lopts)
	} else {
		c, err = harness.Dial(ctx, &harness.RemoteOptions{
			Registry: s.cfg.Registry, EnvironmentID: s.cfg.EnvironmentID, Token: s.cfg.Token,
			Client: copts, RecoveryTimeout: s.cfg.ReconnectTimeout,
			OnReconnect: func(done bool, err error) {
				switch {
				case !done:
					s.log.Warn("connection to the executor lost; open tunnelled connections are reset; reconnecting", "error", err)
				case err == nil:
					s.log.Warn("reconnected to the executor")
				default:
					s.log.Warn("reconnecting failed", "error", err)
				}
			},
		})
	}
	if err != nil {
		return nil, err
	}
	if _, err := c.Initialize(ctx, "executor-tunnel", ""); err != nil {
		_ = c.Close()
		return nil, err
	}
	if !c.Capabilities().TCPTunnel && len(s.cfg.Locals)+len(s.cfg.Socks) > 0 {
		_ = c.Close()
		return nil, ErrUnsupported
	}
	if !c.Capabilities().TCPTunnelListen && len(s.cfg.Remotes) > 0 {
		_ = c.Close()
		return nil, ErrListenUnsupported
	}
	return c, nil
}

// routineRedial dials a new session whenever the current one ends. Owner: Run.
func (s *session) routineRedial(ctx context.Context) {
	for {
		c := s.current()
		select {
		case <-ctx.Done():
			return
		case <-c.Done():
		}
		s.log.Warn("session with the executor ended; dialling again (listeners stay up)", "error", c.Err())
		s.mu.Lock()
		s.ready = make(chan struct{})
		s.mu.Unlock()
		_ = c.Close()
		delay := redialMin
		for {
			nc, err := s.dial(ctx)
			if err == nil {
				s.set(nc)
				s.log.Warn("connected to the executor again")
				break
			}
			if errors.Is(err, ErrUnsupported) || errors.Is(err, ErrListenUnsupported) {
				s.log.Error(err.Error())
			} else {
				s.log.Warn("dialling the executor failed", "error", err, "retry_in", delay)
			}
			if !sleep(ctx, delay) {
				return
			}
			delay = min(2*delay, redialMax)
		}
	}
}

// routineAccept accepts until ln closes; each connection is handled on its own
// goroutine, waited for before it returns. Owner: Run.
func (s *session) routineAccept(ctx context.Context, ln net.Listener, handle func(context.Context, net.Conn)) {
	var wg sync.WaitGroup
	defer wg.Wait()
	// Accepted connections are closed when ctx ends (SIGINT): nothing outlives Run.
	var mu sync.Mutex
	open := map[net.Conn]struct{}{}
	stop := context.AfterFunc(ctx, func() {
		mu.Lock()
		defer mu.Unlock()
		for c := range open {
			_ = c.Close()
		}
	})
	defer stop()
	for {
		lc, err := ln.Accept()
		if err != nil {
			if errors.Is(err, harness.ErrTunnelReset) {
				return // a remote listener, gone with the connection: routineRemote listens again
			}
			if ctx.Err() == nil && !errors.Is(err, net.ErrClosed) {
				s.log.Warn("accept failed", "error", err)
				continue
			}
			return
		}
		mu.Lock()
		if ctx.Err() != nil {
			mu.Unlock()
			_ = lc.Close()
			continue
		}
		open[lc] = struct{}{}
		mu.Unlock()
		wg.Add(1)
		go func() {
			defer wg.Done()
			handle(ctx, lc)
			mu.Lock()
			delete(open, lc)
			mu.Unlock()
		}()
	}
}

// socks serves one SOCKS5 client.
func (s *session) socks(ctx context.Context, lc net.Conn) {
	_ = lc.SetDeadline(time.Now().Add(ConnectWait))
	host, port, err := socksRequest(lc)
	if err != nil {
		s.log.Info("SOCKS5 request refused", "error", err)
		_ = lc.Close()
		return
	}
	_ = lc.SetDeadline(time.Time{})
	s.forward(ctx, lc, host, port, func(err error) {
		rep := byte(socksRepOK)
		switch {
		case err == nil:
		case errors.Is(err, harness.ErrTunnelRefused):
			rep = socksRepNotAllowed
		default:
			rep = socksRepHostUnreach
		}
		_ = socksReply(lc, rep)
	})
}

// forward tunnels lc to host:port. opened, if set, is told the open's outcome first (the
// SOCKS5 reply).
func (s *session) forward(ctx context.Context, lc net.Conn, host string, port int, opened func(error)) {
	dest := socksDest(host, port)
	defer lc.Close()
	c, err := s.client(ctx)
	if err == nil {
		octx, cancel := context.WithTimeout(ctx, ConnectWait)
		var tc *harness.TunnelConn
		tc, err = c.DialTCP(octx, host, port)
		cancel()
		if err == nil {
			if opened != nil {
				opened(nil)
			}
			s.pipe(lc, tc, dest)
			return
		}
	}
	if opened != nil {
		opened(err)
	}
	s.log.Warn("tunnel not opened", "destination", dest, "error", err)
}

// pipe copies both ways with half-close and resets lc when the tunnel is reset.
func (s *session) pipe(lc net.Conn, tc *harness.TunnelConn, dest string) {
	defer tc.Close()
	errc := make(chan error, 1)
	go func() {
		// Reads of a whole chunk: one tunnel/data each (io.Copy would use lc's WriteTo, 32 KiB).
		_, err := io.CopyBuffer(tc, struct{ io.Reader }{lc}, make([]byte, protocol.TunnelMaxChunk))
		if err == nil {
			err = tc.CloseWrite()
		}
		if err != nil {
			_ = tc.Close() // the local side failed (or Run is ending): unblock the read below
		}
		errc <- err
	}()
	reset := func(err error) {
		if errors.Is(err, harness.ErrTunnelReset) {
			s.log.Warn("tunnelled connection reset", "destination", dest, "error", err)
		}
		if tcp, ok := lc.(*net.TCPConn); ok {
			_ = tcp.SetLinger(0) // RST: the local peer must not mistake a cut for an end
		}
		_ = lc.Close()
		_ = tc.Close()
	}
	_, err := io.Copy(lc, tc)
	if err != nil {
		reset(err)
		<-errc
		return
	}
	if cw, ok := lc.(interface{ CloseWrite() error }); ok {
		_ = cw.CloseWrite()
	}
	// The other direction ends at the local side's FIN, or a reset.
	if err := <-errc; err != nil {
		reset(err)
	}
}

// routineRemote serves one -R: accepts on ln (a listener on the executor's host) and
// connects each connection to r.Host:r.Port here. When the connection to the executor
// breaks (the executor closes its listeners with it) it listens again on the next
// session, with back-off. Owner: Run; ends with ctx.
func (s *session) routineRemote(ctx context.Context, r Remote, ln *harness.TunnelListener) {
	dest := socksDest(r.Host, r.Port)
	handle := func(ctx context.Context, ac net.Conn) {
		tc := ac.(*harness.TunnelConn)
		d := net.Dialer{Timeout: ConnectWait}
		lc, err := d.DialContext(ctx, "tcp", dest)
		if err != nil {
			s.log.Warn("-R: connecting the accepted connection failed", "peer_on_executor", tc.RemoteAddr().String(), "destination", dest, "error", err)
			_ = tc.Close()
			return
		}
		s.pipe(lc, tc, dest)
	}
	// After a reconnect the same port is bound again (the one the executor chose for
	// RPORT 0), so the address users were given stays valid.
	port := ln.Port()
	delay := redialMin
	for {
		if ln == nil {
			c, err := s.client(ctx)
			if err == nil {
				ln, err = c.ListenTCP(ctx, r.BindHost, port)
			}
			if err != nil {
				if ctx.Err() != nil {
					return
				}
				s.log.Warn("-R: listening on the executor's host failed; retrying", "bind", net.JoinHostPort(r.BindHost, strconv.Itoa(port)), "error", err, "retry_in", delay)
				if !sleep(ctx, delay) {
					return
				}
				delay = min(2*delay, redialMax)
				continue
			}
			delay = redialMin
			s.log.Warn("-R: listening on the executor's host again", "listen_on_executor", ln.Addr().String())
		}
		closed := make(chan struct{})
		stop := context.AfterFunc(ctx, func() { _ = ln.Close(); close(closed) })
		s.routineAccept(ctx, ln, handle)
		if !stop() {
			<-closed // Close's tunnel/unlisten has returned: nothing outlives Run
		}
		_ = ln.Close()
		if ctx.Err() != nil {
			return
		}
		ln = nil
	}
}

// sleep waits d, or less when ctx ends first; it reports whether d elapsed.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
