package harness

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/execlab/executor/noise"
	"github.com/execlab/executor/noise/channel"
	"github.com/execlab/executor/registry/api"
	"github.com/execlab/executor/relay/initiator"
	"github.com/execlab/executor/relay/wsconn"
)

// ErrStreamReset: the executor (or the rendezvous for it) reset the relay stream
// (relay/initiator); the session then recovers. The peer's reason is discarded.
var ErrStreamReset = initiator.ErrStreamReset

// RemoteOptions configure Dial. Registry, EnvironmentID and Token are required; the struct
// is never mutated.
type RemoteOptions struct {
	// Registry is the environment registry's base URL (http:// or https://).
	Registry string
	// EnvironmentID names the environment (trimmed and validated, spec/registry-auth.md §6).
	EnvironmentID string
	// Token is the bearer sent on connect. Never logged.
	Token string
	// Identity is the harness's static Noise identity, the same for every connect of the
	// Client (spec/registry-auth.md §5.2). Nil generates one.
	Identity *noise.Identity
	// HTTPClient performs connect calls. Nil means a client that never follows redirects.
	HTTPClient *http.Client
	// RecoveryTimeout bounds one session recovery without progress (reference: 25 s):
	// attempts back off from 0.5 s to 5 s with jitter, the last one starts at the deadline;
	// an attempt that fails after catching up new process events moves the deadline to a
	// full RecoveryTimeout from then (docs/reliability.md §5). A resume refused
	// because the executor no longer knows the session (its --session-ttl passed, or it
	// restarted) ends the recovery at once. Zero means DefaultRecoveryTimeout. The first
	// connection waits at most DefaultRecoveryTimeout for an offline environment, but
	// fails at once when its address is wrong (connection refused, host name not found).
	RecoveryTimeout time.Duration
	// OnReconnect, when non-nil, is called when a recovery starts (err is the cause) and
	// again when it ends (done true; err nil on success). It runs on the Client's read loop
	// and must return promptly.
	OnReconnect func(done bool, err error)
	// Conn tunes each relay websocket (ping, pong, write deadline). Nil means
	// RelayPingInterval (10 s), RelayPongTimeout (20 s) with wsconn.Options'
	// ParkedReaderGrace, and wsconn's 60 s write deadline.
	Conn *wsconn.Options
	// Client configures the JSON-RPC Client. Nil means defaults.
	Client *Options
	// Trace, when non-nil, traces each physical connection attempt (first dial and every
	// recovery): it is called before the registry connect and returns the W3C traceparent
	// to send on that connect request, on the rendezvous upgrade and in the cleartext
	// traceparent field (11) of the stream's handshake frame ("" for none), and end,
	// called once with the attempt's result. This package imports no tracing library
	// (cmd/executor wires telemetry). Nothing is carried inside the encrypted
	// stream. Nil (the default): none of these is sent, bytes as the reference's.
	Trace func(ctx context.Context) (traceparent string, end func(error))
	// DisableARQ stops the harness from offering ARQ v1 (per-stream acknowledgement and
	// retransmission of relay records, docs/reliability.md §8) on its handshake frame.
	// Default false: offered; used only when the executor accepts it (only ours does), so
	// with a released executor the stream is the released one either way.
	DisableARQ bool
}

// Dial connects to a remote environment through its registry and rendezvous
// (spec/registry-auth.md §5, spec/relay-noise.md §4.1, §13): connect bundle, websocket,
// resume + hybrid IK handshake pinning the bundle's executor key, then a Client on the
// secure channel. The caller still calls Initialize.
//
// The Client recovers its session transparently: when the stream breaks it fetches a fresh
// bundle, opens a new socket and stream, handshakes, re-attaches with initialize
// {resumeSessionId}, catches up every process it started with process/read and re-sends
// in-flight requests that are safe to repeat (process/write keeps its writeId). Requests
// that are not safe to repeat fail with an *RPCError of code CodeConnectionLost. A recovery
// that does not succeed within RecoveryTimeout ends the Client.
//
// ctx bounds the first connection only.
func Dial(ctx context.Context, opts *RemoteOptions) (*Client, error) {
	if opts == nil || opts.Registry == "" || opts.Token == "" {
		return nil, errors.New("harness: RemoteOptions.Registry and Token are required")
	}
	o := *opts
	env, err := api.ValidateEnvironmentID(o.EnvironmentID)
	if err != nil {
		return nil, fmt.Errorf("environment registry configuration error: %w", err)
	}
	o.EnvironmentID = env
	if o.Identity == nil {
		if o.Identity, err = noise.GenerateIdentity(nil); err != nil {
			return nil, fmt.Errorf("generating harness identity: %w", err)
		}
	}
	if o.Conn == nil {
		o.Conn = &wsconn.Options{PingInterval: RelayPingInterval, PongTimeout: RelayPongTimeout, ParkedReaderGrace: true}
	}
	if o.RecoveryTimeout <= 0 {
		o.RecoveryTimeout = DefaultRecoveryTimeout
	}
	copts := o.Client.withDefaults()
	d := &remoteDialer{opts: o, log: copts.Logger.With("component", "harness")}
	// The first connection waits at most the reference's 25 s for an offline environment
	// even with a longer recovery window: nothing is at stake yet.
	// Tunnels live on one physical connection (the executor closes them with it): a
	// recovery resets them (tunnel.go).
	var cl atomic.Pointer[Client]
	onReconnect := func(done bool, err error) {
		if c := cl.Load(); c != nil && !done {
			c.tunnels.resetAll(fmt.Errorf("%w: relay connection lost (%v)", ErrTunnelReset, err))
		}
		if o.OnReconnect != nil {
			o.OnReconnect(done, err)
		}
	}
	sc, err := newSessionConn(ctx, d.dial, min(o.RecoveryTimeout, DefaultRecoveryTimeout), o.RecoveryTimeout, onReconnect, d.log)
	if err != nil {
		return nil, err
	}
	sc.acks = newOutputAcks()
	sc.acks.setFlowControlled(flowControlled(sc.cur))
	c := openClient(sc, o.Client, sc.acks)
	cl.Store(c)
	return c, nil
}

// remoteDialer opens physical connections: one per attempt, each with a fresh bundle.
type remoteDialer struct {
	opts RemoteOptions
	log  *slog.Logger
}

// dial performs one physical attempt (spec/registry-auth.md §5.3): fresh connect bundle,
// websocket to its URL verbatim, resume + handshake on a fresh stream id. A 401 on the
// upgrade fetches one more bundle and retries once.
func (d *remoteDialer) dial(ctx context.Context) (MessageConn, error) {
	if d.opts.Trace == nil {
		return d.dialAttempt(ctx, "")
	}
	tp, end := d.opts.Trace(ctx)
	c, err := d.dialAttempt(ctx, tp)
	end(err)
	return c, err
}

// dialAttempt is dial with traceparent (or "") sent on connect and on the upgrade.
func (d *remoteDialer) dialAttempt(ctx context.Context, traceparent string) (MessageConn, error) {
	var hdr http.Header
	if traceparent != "" {
		hdr = http.Header{"Traceparent": {traceparent}}
	}
	for try := 0; ; try++ {
		bundle, err := fetchBundle(ctx, &d.opts, d.opts.EnvironmentID, d.opts.Identity.Public(), traceparent)
		if err != nil {
			return nil, err
		}
		executorKey, err := noise.ParsePublicKeyJSON(bundle.ExecutorPublicKey)
		if err != nil {
			return nil, errIncompleteBundle
		}
		ws, err := wsconn.Dial(ctx, bundle.URL, &wsconn.DialOptions{Conn: d.opts.Conn, Header: hdr})
		var de *wsconn.DialError
		if errors.As(err, &de) && de.StatusCode == 401 && try == 0 {
			continue
		}
		if err != nil {
			return nil, err
		}
		streamID := newStreamID()
		st, err := initiator.Open(ctx, ws, initiator.Options{StreamID: streamID, Traceparent: traceparent, OfferARQ: !d.opts.DisableARQ})
		if err != nil {
			return nil, err
		}
		rc := relayRecords{st}
		hctx, cancel := context.WithTimeout(ctx, handshakeTimeout)
		conn, err := channel.Initiator(hctx, rc, &channel.InitiatorConfig{
			Static:          d.opts.Identity,
			ResponderStatic: executorKey,
			Prologue:        noise.AppendPrologue(nil, bundle.EnvironmentID, bundle.ExecutorRegistrationID, streamID),
			Authorization:   []byte(bundle.HarnessKeyAuthorization),
		})
		cancel()
		if err != nil {
			rc.Close()
			return nil, fmt.Errorf("Noise harness handshake failed before connection became ready: %w", err)
		}
		d.log.Debug("relay stream established", "stream_id", streamID)
		if st.ARQ() {
			return arqChannelConn{conn}, nil
		}
		return conn, nil
	}
}

// relayRecords is a relay stream as the Noise channel's RecordConn (with PacketReleaser):
// the relay may not import noise, so the two Packet types are twins and convert directly.
type relayRecords struct{ *initiator.Stream }

func (r relayRecords) ReadPacket(ctx context.Context) (channel.Packet, error) {
	p, err := r.Stream.ReadPacket(ctx)
	return channel.Packet(p), err
}

func (r relayRecords) WritePacket(ctx context.Context, p channel.Packet) error {
	return r.Stream.WritePacket(ctx, initiator.Packet(p))
}

var (
	_ channel.RecordConn     = relayRecords{}
	_ channel.PacketReleaser = relayRecords{}
)

// arqChannelConn is the Noise channel of a relay stream that runs ARQ v1: its send window
// bounds the bytes in flight through the rendezvous, so our executor pushes lossless output
// with its larger window on it and the harness acknowledges less often (flowControlled).
type arqChannelConn struct{ *channel.Conn }

// FlowControlled reports true (flowControlled).
func (arqChannelConn) FlowControlled() bool { return true }

// flowControlled reports whether conn's transport bounds its bytes in flight itself (a
// relay stream running ARQ v1).
func flowControlled(conn MessageConn) bool {
	fc, ok := conn.(interface{ FlowControlled() bool })
	return ok && fc.FlowControlled()
}

// newStreamID returns a UUIDv4 in text form, like the reference harness's stream ids.
func newStreamID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
