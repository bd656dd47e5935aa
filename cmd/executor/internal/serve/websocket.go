package serve

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"

	"github.com/execlab/executor/executor"
	"github.com/execlab/executor/internal/wsmsg"
)

// serveWebSocket listens on addr, prints the bound URL on stdout and serves until ctx
// ends. It returns after every connection goroutine has exited.
func serveWebSocket(ctx context.Context, srv *executor.Server, l Listen, stdout io.Writer, log *slog.Logger) error {
	ln, err := net.Listen("tcp", l.Addr.String())
	if err != nil {
		return fmt.Errorf("binding %s: %w", l.Addr, err)
	}
	if !l.Addr.Addr().IsLoopback() {
		log.Warn("listening on a non-loopback address; anyone who can reach it can run commands", "addr", ln.Addr().String())
	}
	if _, err := fmt.Fprintf(stdout, "ws://%s\n", ln.Addr().String()); err != nil {
		ln.Close()
		return fmt.Errorf("printing listen URL: %w", err)
	}

	connCtx, cancelConns := context.WithCancel(ctx)
	defer cancelConns()
	var conns sync.WaitGroup
	h := &wsHandler{ctx: connCtx, srv: srv, log: log, conns: &conns}
	hs := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
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
	if err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serving websocket: %w", err)
	}
	return nil
}

type wsHandler struct {
	ctx   context.Context // lifetime of all connections; cancelled at shutdown
	srv   *executor.Server
	log   *slog.Logger
	conns *sync.WaitGroup
}

func (h *wsHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if _, browser := r.Header["Origin"]; browser {
		http.Error(w, "browser origins are not allowed", http.StatusForbidden)
		return
	}
	switch r.URL.Path {
	case "/readyz":
		w.WriteHeader(http.StatusOK)
		return
	case "/":
	default:
		http.NotFound(w, r)
		return
	}
	if !headerHasToken(r.Header, "Connection", "upgrade") {
		// As the reference answers a plain GET / (the websocket library would say 426).
		http.Error(w, "Connection header did not include 'upgrade'", http.StatusBadRequest)
		return
	}
	c, err := websocket.Accept(w, r, &websocket.AcceptOptions{CompressionMode: websocket.CompressionDisabled})
	if err != nil {
		h.log.Debug("websocket upgrade failed", "err", err)
		return
	}
	c.SetReadLimit(MaxMessageBytes)
	h.conns.Add(1)
	defer h.conns.Done()
	ctx, cancel := context.WithCancel(h.ctx)
	defer cancel()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // pingLoop, owned by this connection
		defer wg.Done()
		pingLoop(ctx, c, cancel)
	}()
	mc := wsmsg.New(c)
	err = h.srv.ServeConn(ctx, mc, executor.ConnInfo{Transport: executor.TransportWebSocket, Peer: r.RemoteAddr})
	cancel()
	_ = c.CloseNow()
	wg.Wait()
	if err != nil {
		h.log.Debug("connection ended", "peer", r.RemoteAddr, "err", err)
	}
}

// pingLoop pings every PingInterval; a pong missing for PongTimeout ends the connection.
func pingLoop(ctx context.Context, c *websocket.Conn, cancel context.CancelFunc) {
	t := time.NewTicker(PingInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		pctx, pcancel := context.WithTimeout(ctx, PongTimeout)
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
