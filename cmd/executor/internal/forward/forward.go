package forward

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/coder/websocket"

	"github.com/execlab/executor/executor/jsonrpc"
	"github.com/execlab/executor/internal/wsmsg"
)

// ErrBadTarget is returned by CheckTarget for a --connect URL that is not ws:// or wss://.
var ErrBadTarget = errors.New("forward destination must be a ws:// or wss:// URL")

// CheckTarget validates a --connect URL as the reference does (the CLI prefixes its
// "failed to configure exec-server websocket: " context).
func CheckTarget(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" {
		return errors.New("relative URL without a base")
	}
	if u.Scheme != "ws" && u.Scheme != "wss" {
		return ErrBadTarget
	}
	if u.Host == "" {
		return errors.New("empty host")
	}
	return nil
}

// Options configure a Forwarder. Nil means defaults; never mutated.
type Options struct {
	// Target is the exec-server WebSocket URL (--connect). Required.
	Target string
	// DialTimeout bounds each connect to Target. Zero means DialTimeout.
	DialTimeout time.Duration
	// HTTPClient performs the upgrade. Nil means coder/websocket's default.
	HTTPClient *http.Client
	// Logger receives one line per failed target connection. Nil discards.
	Logger *slog.Logger
}

// Forwarder bridges harness streams to one target. Safe for concurrent use: each Bridge
// call is independent.
type Forwarder struct {
	opts Options
	log  *slog.Logger
}

// New returns a Forwarder for opts (copied).
func New(opts *Options) *Forwarder {
	f := &Forwarder{opts: *opts}
	if f.opts.DialTimeout <= 0 {
		f.opts.DialTimeout = DialTimeout
	}
	f.log = f.opts.Logger
	if f.log == nil {
		f.log = slog.New(slog.DiscardHandler)
	}
	return f
}

// Bridge connects a fresh WebSocket to the target and passes messages between it and
// harness until either side ends, ctx is done, or a write fails; it then closes both and
// returns after both pumps have exited. A target that cannot be reached ends the harness
// stream at once (harness is closed; the harness sees its stream end, as with the
// reference). The returned error says why the bridge ended (nil: the harness closed).
func (f *Forwarder) Bridge(ctx context.Context, harness jsonrpc.MessageConn) error {
	defer harness.Close()
	dctx, cancel := context.WithTimeout(ctx, f.opts.DialTimeout)
	ws, resp, err := websocket.Dial(dctx, f.opts.Target, &websocket.DialOptions{HTTPClient: f.opts.HTTPClient})
	cancel()
	if resp != nil && resp.Body != nil {
		resp.Body.Close()
	}
	if err != nil {
		f.log.Warn("forward target connection failed", "component", "forward", "error", err)
		return fmt.Errorf("connecting to the forward target: %w", err)
	}
	ws.SetReadLimit(MaxMessageBytes)
	target := wsmsg.New(ws)
	defer target.Close()

	ctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	var wg sync.WaitGroup
	pump := func(from, to jsonrpc.MessageConn, side string) {
		defer wg.Done()
		for {
			msg, err := from.ReadMessage(ctx)
			if err != nil {
				stop(fmt.Errorf("reading from the %s: %w", side, err))
				return
			}
			if err := to.WriteMessage(ctx, msg); err != nil {
				stop(fmt.Errorf("writing to the %s: %w", other(side), err))
				return
			}
		}
	}
	wg.Add(2)
	go pump(harness, target, "harness")
	go pump(target, harness, "target")
	<-ctx.Done()
	// Closing both ends unblocks the pump still reading or writing.
	_ = target.Close()
	_ = harness.Close()
	wg.Wait()
	return context.Cause(ctx)
}

func other(side string) string {
	if side == "harness" {
		return "target"
	}
	return "harness"
}
