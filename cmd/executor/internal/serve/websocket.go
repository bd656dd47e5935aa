package serve

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"

	"github.com/execlab/executor/executor"
	"github.com/execlab/executor/internal/connlimit"
	"github.com/execlab/executor/internal/wsauth"
	"github.com/execlab/executor/internal/wsmsg"
)

// serveWebSocket listens on addr, prints the bound URL on stdout and serves until ctx
// ends. It returns after every connection goroutine has exited.
func serveWebSocket(ctx context.Context, srv *executor.Server, cfg Config, log *slog.Logger) error {
	l := cfg.Listen
	ln, err := net.Listen("tcp", l.Addr.String())
	if err != nil {
		return fmt.Errorf("binding %s: %w", l.Addr, err)
	}
	if !l.Addr.Addr().IsLoopback() {
		log.Warn("listening on a non-loopback address; anyone who can reach it can run commands", "addr", ln.Addr().String(), "ws_auth", cfg.Auth.Mode().String())
	}
	maxConns := cfg.MaxConns
	if maxConns <= 0 {
		maxConns = maxConnsFor(softNoFile())
	}
	lim := connlimit.New(maxConns)
	ln = lim.Listener(ln)
	if _, err := fmt.Fprintf(cfg.Stdout, "ws://%s\n", ln.Addr().String()); err != nil {
		ln.Close()
		return fmt.Errorf("printing listen URL: %w", err)
	}
	log.Info("websocket listener", "component", "serve", "addr", ln.Addr().String(), "ws_auth", cfg.Auth.String(), "max_conns", maxConns)

	connCtx, cancelConns := context.WithCancel(ctx)
	defer cancelConns()
	var conns sync.WaitGroup
	h := &wsHandler{ctx: connCtx, srv: srv, log: log, conns: &conns, auth: cfg.Auth,
		upgrades: make(chan struct{}, MaxInFlightUpgrades), now: time.Now, peerCheck: sandboxedPeer}
	hs := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: ReadHeaderTimeout,
		ReadTimeout:       RequestReadTimeout,
		WriteTimeout:      RequestWriteTimeout,
		IdleTimeout:       IdleTimeout,
		MaxHeaderBytes:    MaxHeaderBytes,
		ConnState:         lim.ConnState, // busy (active, hijacked) connections are never evicted
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelDebug),
	}
	serveErr := make(chan error, 1)
	go func() { serveErr <- hs.Serve(ln) }() // owned here; ends when hs is closed
	select {
	case <-ctx.Done():
	case err = <-serveErr:
	}
	_ = hs.Close() // stop accepting; hijacked WebSockets are not closed by this
	cancelConns()
	conns.Wait()
	if err == nil {
		<-serveErr
	}
	if n := lim.Evicted(); n > 0 {
		log.Info("connection cap reached", "component", "serve", "evicted_idle", n)
	}
	if err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serving websocket: %w", err)
	}
	return nil
}

type wsHandler struct {
	ctx      context.Context // lifetime of all connections; cancelled at shutdown
	srv      *executor.Server
	log      *slog.Logger
	conns    *sync.WaitGroup
	auth     *wsauth.Policy   // nil or ModeNone: every upgrade is accepted
	upgrades chan struct{}    // semaphore: upgrade requests being checked and switched
	now      func() time.Time // clock for JWT exp/nbf
	warned   atomic.Bool      // the unauthenticated-listener warning was logged
	// peerCheck finds a sandboxed descendant holding a loopback client socket
	// (sandboxedPeer; replaced in tests).
	peerCheck func(local, remote netip.AddrPort) (int, error)
}

// MsgSandboxedPeer is the 403 body for an upgrade from a sandboxed command of this
// executor on a listener without --ws-auth (ours; the reference accepts it).
const MsgSandboxedPeer = "sandboxed commands of this executor may not connect to a listener without --ws-auth"

// plain writes a text/plain response with body exactly msg (no trailing newline), as the
// reference's axum rejections do; an empty msg sends no content type.
func plain(w http.ResponseWriter, status int, msg string) {
	if msg != "" {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	} else {
		w.Header().Set("Content-Length", "0") // also on HEAD, as the reference
	}
	w.WriteHeader(status)
	_, _ = io.WriteString(w, msg)
}

// ServeHTTP routes as the reference's listener does (registry-auth.md §13), in its
// order: Origin → 403; /readyz; other paths → 404; then the upgrade checks of its
// WebSocket extractor (405, 400s); then listener auth (401); then the upgrade.
func (h *wsHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if _, browser := r.Header["Origin"]; browser {
		plain(w, http.StatusForbidden, "")
		return
	}
	switch r.URL.Path {
	case "/readyz":
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET,HEAD")
			plain(w, http.StatusMethodNotAllowed, "")
			return
		}
		plain(w, http.StatusOK, "")
		return
	case "/":
	default:
		plain(w, http.StatusNotFound, "")
		return
	}
	if status, msg := checkUpgradeRequest(r); status != 0 {
		plain(w, status, msg)
		return
	}
	select {
	case h.upgrades <- struct{}{}:
	default:
		plain(w, http.StatusServiceUnavailable, "too many concurrent websocket upgrades")
		return
	}
	released := false
	release := func() {
		if !released {
			released = true
			<-h.upgrades
		}
	}
	defer release()
	// Both checks run under the upgrade bound: the /proc scan costs milliseconds.
	if h.auth.Mode() == wsauth.ModeNone && h.refuseSandboxedPeer(w, r) {
		return
	}
	if aerr := h.auth.Authorize(r.Header, h.now()); aerr != nil {
		// The reason is one of wsauth's fixed texts; the header itself is never logged.
		h.log.Info("websocket upgrade refused", "component", "serve", "peer", r.RemoteAddr, "status", aerr.Status, "reason", aerr.Message)
		plain(w, aerr.Status, aerr.Message)
		return
	}
	// The request deadlines of the http.Server do not apply to a WebSocket session.
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Time{})
	_ = rc.SetWriteDeadline(time.Time{})
	c, err := websocket.Accept(bufferedHijack{w}, r, &websocket.AcceptOptions{CompressionMode: websocket.CompressionDisabled})
	release()
	if err != nil {
		h.log.Debug("websocket upgrade failed", "error", err)
		return
	}
	h.conns.Add(1)
	defer h.conns.Done()
	info := executor.ConnInfo{Transport: executor.TransportWebSocket, Peer: r.RemoteAddr}
	if h.auth.Mode() == wsauth.ModeNone {
		info.OnSandboxedNetworkStart = func() { h.warnSandboxedNetwork(r.RemoteAddr) }
	}
	err = ServeWebSocket(h.ctx, c, h.srv, info, MaxMessageBytes, PingInterval, PongTimeout)
	if err != nil {
		h.log.Debug("connection ended", "peer", r.RemoteAddr, "error", err)
	}
}

// refuseSandboxedPeer answers 403 when the client end of this loopback connection is held
// by a command this executor runs in a sandbox (security issue 13: such a command could
// otherwise ask an unauthenticated listener for an unconfined process). Only used without
// --ws-auth; fails open when /proc cannot tell.
func (h *wsHandler) refuseSandboxedPeer(w http.ResponseWriter, r *http.Request) bool {
	la, _ := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	ta, ok := la.(*net.TCPAddr)
	remote, err := netip.ParseAddrPort(r.RemoteAddr)
	if !ok || err != nil {
		return false
	}
	local := ta.AddrPort()
	local = netip.AddrPortFrom(local.Addr().Unmap(), local.Port())
	remote = netip.AddrPortFrom(remote.Addr().Unmap(), remote.Port())
	pid, err := h.peerCheck(local, remote)
	if err != nil {
		h.log.Debug("sandboxed-peer check skipped", "component", "serve", "peer", r.RemoteAddr, "error", err)
		return false
	}
	if pid == 0 {
		return false
	}
	h.log.Warn("refused a WebSocket upgrade from a sandboxed command of this executor; listeners without auth only serve unsandboxed clients (use "+RemedyWSAuth+")",
		"component", "serve", "peer", r.RemoteAddr, "pid", pid)
	plain(w, http.StatusForbidden, MsgSandboxedPeer)
	return true
}

// checkUpgradeRequest applies the reference's WebSocket-extractor checks in its order and
// returns its status and body for the first that fails (0 when all pass). The key's value
// is not checked here (the reference does not either; the library checks it after auth).
func checkUpgradeRequest(r *http.Request) (int, string) {
	switch {
	case r.Method != http.MethodGet:
		return http.StatusMethodNotAllowed, "Request method must be `GET`"
	case !headerHasToken(r.Header, "Connection", "upgrade"):
		return http.StatusBadRequest, "Connection header did not include 'upgrade'"
	case !strings.EqualFold(r.Header.Get("Upgrade"), "websocket"):
		return http.StatusBadRequest, "`Upgrade` header did not include 'websocket'"
	case r.Header.Get("Sec-WebSocket-Version") != "13":
		return http.StatusBadRequest, "`Sec-WebSocket-Version` header did not include '13'"
	case len(r.Header.Values("Sec-WebSocket-Key")) == 0:
		return http.StatusBadRequest, "`Sec-WebSocket-Key` header missing"
	}
	return 0, ""
}

// ServeWebSocket serves srv on the upgraded socket c until the connection ends or ctx is
// done: messages up to readLimit bytes, a ping every pingInterval, and a pong missing for
// pongTimeout ends the connection. It closes c and waits for its ping loop before
// returning ServeConn's error. Used by this listener and by `remote`'s direct socket.
func ServeWebSocket(ctx context.Context, c *websocket.Conn, srv *executor.Server, info executor.ConnInfo,
	readLimit int64, pingInterval, pongTimeout time.Duration) error {
	c.SetReadLimit(readLimit)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // pingLoop, owned by this connection
		defer wg.Done()
		pingLoop(ctx, c, cancel, pingInterval, pongTimeout)
	}()
	err := srv.ServeConn(ctx, wsmsg.New(c), info)
	cancel()
	_ = c.CloseNow()
	wg.Wait()
	return err
}

// pingLoop pings every interval; a pong missing for timeout ends the connection (cancel).
func pingLoop(ctx context.Context, c *websocket.Conn, cancel context.CancelFunc, interval, timeout time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		pctx, pcancel := context.WithTimeout(ctx, timeout)
		err := c.Ping(pctx)
		pcancel()
		if err != nil {
			cancel()
			return
		}
	}
}

// headerHasToken reports whether a comma-separated header contains token (case-insensitive).
func headerHasToken(h http.Header, name, token string) bool {
	for _, v := range h.Values(name) {
		for _, t := range strings.Split(v, ",") {
			if strings.EqualFold(strings.TrimSpace(t), token) {
				return true
			}
		}
	}
	return false
}
