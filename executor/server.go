package executor

import (
	"context"
	"crypto/x509"
	"log/slog"
	"sync"
	"time"

	"github.com/execlab/executor/executor/capdiscover"
	"github.com/execlab/executor/executor/envconfig"
	"github.com/execlab/executor/executor/fs"
	"github.com/execlab/executor/executor/jsonrpc"
	"github.com/execlab/executor/executor/netproxy/credmask"
	"github.com/execlab/executor/executor/process"
	"github.com/execlab/executor/executor/protocol"
	"github.com/execlab/executor/executor/session"
	"github.com/execlab/executor/executor/tunnel"
	"github.com/execlab/executor/sandbox"
)

// Options configures a Server. Nil means defaults; it is never mutated.
type Options struct {
	// ConcurrentRequests ≤ 1: serial request handling per connection (default);
	// N ≥ 2: control and ordinary lanes with N permits each (spec/jsonrpc.md §1.6).
	ConcurrentRequests int
	// SessionTTL is how long a detached session survives. Default 30 s.
	SessionTTL time.Duration
	// MaxRetainedBytes and MaxRetainedChunks bound each process's retained output.
	// Defaults 1 MiB and 50,000 chunks.
	MaxRetainedBytes  int
	MaxRetainedChunks int
	// MaxUnackedBytes and OutputWindow bound each outputAck process (docs/reliability.md):
	// retained unacknowledged output (default 64 MiB, then the child blocks) and output
	// pushed but not acknowledged (default 2 MiB). FlowControlledOutputWindow replaces
	// OutputWindow on connections whose ConnInfo.FlowControlled is set (default 6 MiB).
	MaxUnackedBytes            int
	OutputWindow               int
	FlowControlledOutputWindow int
	// MaxUnackedTotalBytes bounds the unacknowledged output of all outputAck processes of
	// all sessions together (one process.Budget per Server): over it every such process
	// blocks on its output as at its own bound, until acknowledgements or a closed
	// session release bytes. Default process.DefaultMaxUnackedTotalBytes (64 MiB).
	MaxUnackedTotalBytes int
	// PrependPathDirs are absolute directories of helper binaries this executor ships,
	// advertised as environmentInfo.prependPathDirs in priority order
	// (capabilities-0.171.0.md §12.2): clients prepend them to the PATH they send. The
	// executor does not add them to any child's PATH itself (neither does the reference).
	// Nil: none, and the member is absent.
	PrependPathDirs []string
	// Logger receives structured logs; nil discards them.
	Logger *slog.Logger
	// Sandbox enforces sandbox intent (process/start and fs/* `sandbox`,
	// enforceManagedNetwork; spec/sandbox.md). Its probe Report is served as
	// environment/info's sandboxSupport. Nil: every request that needs enforcement fails
	// closed with -32602, sandboxSupport is absent and sandboxedFileStreaming false.
	Sandbox *sandbox.Launcher
	// TCPUpstreamProxy is `--tcp-upstream-proxy HOST:PORT` (codex 0.171.0): raw TCP of
	// managed sandboxes must leave through that HTTP CONNECT proxy. This executor has
	// no executor-local managed proxy to enforce it with, so when set every
	// process/start with managedNetwork or enforceManagedNetwork is refused (-32602),
	// as the reference refuses it without one. "" (default): no such requirement.
	TCPUpstreamProxy string
	// LinuxSandboxTransparentTCP is `--linux-sandbox-transparent-tcp` (codex 0.171.0):
	// every sandboxed start with enforceManagedNetwork gets transparent TCP, as if its
	// networkProxy asked for it (process.Options.TransparentTCP).
	LinuxSandboxTransparentTCP bool
	// ProcessGuard makes every process group die with the executor, even after kill -9
	// (process.Guard). Nil: only each group's leader gets SIGTERM (Pdeathsig). The caller
	// owns it and closes it after the Server.
	ProcessGuard *process.Guard
	// Observer receives request, back-pressure and process counts for metrics
	// (metrics.go). Nil means none. When it also implements tunnel.Observer it counts
	// tunnel opens.
	Observer Observer
	// TunnelPolicy says where tunnel/open may connect (`--tunnel-allow`). Nil:
	// tunnel.DefaultPolicy (loopback only). A policy that allows nothing ("none") turns
	// the tcpTunnel capability off.
	TunnelPolicy *tunnel.Policy
	// TunnelListenPolicy says what tunnel/listen may bind (`--tunnel-listen-allow`). Nil:
	// tunnel.DefaultListenPolicy (loopback); "none" turns tcpTunnelListen off.
	TunnelListenPolicy *tunnel.Policy
	// CodexHome is $CODEX_HOME of the executor (cmd/ resolves it, default ~/.codex): the
	// credential-masking CA writes its certificate and trust bundle under CodexHome/proxy
	// on first use; credentialMasking* are advertised when it can (credmask.CAPossible);
	// capabilities/discoverV2 scans its skills and plugins. "": credential masking is
	// refused (-32602) and not advertised, and discovery uses $HOME/.codex.
	CodexHome string
	// UpstreamRoots verifies the upstreams of credential-masking interception; nil:
	// the system roots. Tests set it.
	UpstreamRoots *x509.CertPool
}

func (o *Options) withDefaults() Options {
	var c Options
	if o != nil {
		c = *o
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Observer == nil {
		c.Observer = nopObserver{}
	}
	if c.TunnelPolicy == nil {
		c.TunnelPolicy = tunnel.DefaultPolicy()
	}
	if c.TunnelListenPolicy == nil {
		c.TunnelListenPolicy = tunnel.DefaultListenPolicy()
	}
	return c
}

// Transport names the kind of connection, which only changes error texts.
type Transport uint8

const (
	TransportWebSocket Transport = iota
	TransportStdio
	TransportRelay
)

// ConnInfo describes a connection for ServeConn.
type ConnInfo struct {
	Transport Transport
	// Peer is the client's address ("127.0.0.1:5555") for WebSocket connections.
	Peer string
	// FlowControlled: the transport bounds the bytes in flight to the client by flow
	// control of its own, so no queue between executor and client can overflow (a relay
	// stream running ARQ v1, docs/reliability.md §8). Lossless output then uses
	// Options.FlowControlledOutputWindow instead of OutputWindow (§4). Default false.
	FlowControlled bool
	// OnSandboxedNetworkStart, when set, is called before each process/start that passed
	// the handshake checks and whose sandbox profile (managed or external) enables the
	// network. It runs on the request's goroutine and must not block. The WebSocket
	// listener without auth sets it to warn that such a command can reach the listener.
	OnSandboxedNetworkStart func()
}

func (ci ConnInfo) parseErrorPrefix() string {
	switch ci.Transport {
	case TransportStdio:
		return "failed to parse JSON-RPC message from exec-server stdio"
	case TransportRelay:
		return "failed to parse JSON-RPC message from exec-server relay"
	}
	return "failed to parse websocket JSON-RPC message from exec-server websocket " + ci.Peer
}

// Server serves JSON-RPC connections. All methods are safe for concurrent use.
//
// Lifetime: whoever calls NewServer calls Close, once it no longer wants connections
// served (a transport that hands connections to ServeConn never closes a Server it did not
// create). Close is the one shutdown path, in this order:
//
//  1. new ServeConn calls fail at once with ErrServerClosed (their MessageConn is closed);
//  2. every running ServeConn has its ctx cancelled with cause ErrServerClosed: in-flight
//     handlers see the cancellation, the MessageConn is closed, and ServeConn returns
//     ErrServerClosed;
//  3. Close waits until every ServeConn has returned (so no goroutine of any connection
//     is left), and only then
//  4. kills every process of every session and waits for them to exit.
//
// Close is idempotent: a second call waits as the first does. It must not be called from
// inside a handler of one of the Server's own connections (it would wait for itself).
type Server struct {
	opts     Options
	sessions *session.Table[*sessionState]
	info     *protocol.EnvironmentInfo // computed once: resume results must be identical
	fs       *fs.Service
	homes    capdiscover.Homes // capabilities/discoverV2's locations (discoveryHomes)
	envcfg   *envconfig.Reader // environmentConfig/read (newEnvConfigReader)
	// budget bounds the unacknowledged output of every session's Manager together.
	budget *process.Budget
	// runtimeGrants are extra files sandboxed stages need readable (sandboxRuntimeGrants).
	runtimeGrants []string
	// ca is the credential-masking CA, created once on first use (credentialCA).
	caOnce sync.Once
	ca     *credmask.CA
	caErr  error

	// mu guards closed and cancels: ServeConn registers under it so that Close sees every
	// connection that got past the closed check. Held briefly, never while waiting.
	mu      sync.Mutex
	closed  bool
	cancels map[uint64]context.CancelCauseFunc // running ServeConns by serial; guarded by mu
	rpcs    map[uint64]*jsonrpc.Conn           // their JSON-RPC conns (QueueStats); guarded by mu
	serial  uint64                             // last ServeConn serial; guarded by mu
	conns   sync.WaitGroup                     // one count per running ServeConn
}

// NewServer returns a Server. It starts nothing; the environment is inspected once here.
func NewServer(opts *Options) *Server {
	o := opts.withDefaults()
	var grants []string
	if o.Sandbox != nil {
		grants = sandboxRuntimeGrants(o.Sandbox.Executable())
	}
	return &Server{
		opts:          o,
		sessions:      session.NewTable[*sessionState](o.SessionTTL),
		info:          withTunnel(withPrependPathDirs(withSessionTTL(detectEnvironment(o.Sandbox, o.CodexHome), o.SessionTTL), o.PrependPathDirs), o.TunnelPolicy, o.TunnelListenPolicy),
		fs:            fs.New(&fs.Options{Sandbox: o.Sandbox, RuntimeReadGrants: grants}),
		budget:        process.NewBudget(o.MaxUnackedTotalBytes),
		runtimeGrants: grants,
		homes:         discoveryHomes(o.CodexHome),
		envcfg:        newEnvConfigReader(o.CodexHome),
	}
}

// ServeConn runs one connection until the peer disconnects, ctx is done or the server
// closes. It returns after the connection's goroutines have exited; the connection's
// session is then detached (its processes keep running for the TTL). After Close it
// returns ErrServerClosed at once; when Close ends it, it returns ErrServerClosed.
func (s *Server) ServeConn(ctx context.Context, mc jsonrpc.MessageConn, info ConnInfo) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		_ = mc.Close()
		return ErrServerClosed
	}
	if s.cancels == nil {
		s.cancels = make(map[uint64]context.CancelCauseFunc)
	}
	s.serial++
	slot := s.serial
	s.cancels[slot] = cancel
	s.conns.Add(1)
	s.mu.Unlock()
	s.opts.Observer.ConnOpened()
	defer func() {
		s.opts.Observer.ConnClosed()
		s.mu.Lock()
		delete(s.cancels, slot)
		delete(s.rpcs, slot)
		s.mu.Unlock()
		s.conns.Done()
	}()

	rpc := jsonrpc.NewConn(mc, &jsonrpc.Options{
		ConcurrentRequests: s.opts.ConcurrentRequests,
		ParseErrorPrefix:   info.parseErrorPrefix(),
		Logger:             s.opts.Logger,
		Observer:           s.opts.Observer,
	})
	s.mu.Lock()
	if s.rpcs == nil {
		s.rpcs = make(map[uint64]*jsonrpc.Conn)
	}
	s.rpcs[slot] = rpc
	s.mu.Unlock()
	c := newConn(s, rpc, info)
	defer c.close()
	return rpc.Run(ctx, c)
}

// Close shuts the server down as the Server type's doc describes: it refuses new
// connections, cancels the running ones and waits for their ServeConn calls to return,
// then kills every process of every session and waits for them.
func (s *Server) Close() {
	s.mu.Lock()
	s.closed = true
	cancels := make([]context.CancelCauseFunc, 0, len(s.cancels))
	for _, cancel := range s.cancels {
		cancels = append(cancels, cancel)
	}
	s.mu.Unlock()
	for _, cancel := range cancels {
		cancel(ErrServerClosed)
	}
	s.conns.Wait()
	s.sessions.Close()
}

// SessionCount reports the number of live sessions (attached or detached).
func (s *Server) SessionCount() int { return s.sessions.Len() }

// QueueStats is a snapshot of the Server's queues, for metrics: the JSON-RPC queues summed
// over the running connections and the process queues summed over every session.
type QueueStats struct {
	RPC     jsonrpc.QueueStats // summed over the running connections
	Process process.QueueStats // summed over every session's processes
}

// QueueStats sums the queues of every connection and session. It holds no lock while
// reading them (each connection and process takes its own briefly), so it may run at any
// time, e.g. on every metrics scrape.
func (s *Server) QueueStats() QueueStats {
	s.mu.Lock()
	rpcs := make([]*jsonrpc.Conn, 0, len(s.rpcs))
	for _, c := range s.rpcs {
		rpcs = append(rpcs, c)
	}
	s.mu.Unlock()
	var q QueueStats
	for _, c := range rpcs {
		q.RPC = q.RPC.Add(c.QueueStats())
	}
	for _, st := range s.sessions.States() {
		q.Process = q.Process.Add(st.procs.QueueStats())
	}
	return q
}

// credentialCAFunc is credentialCA for process.Options, nil without a CodexHome.
func (s *Server) credentialCAFunc() func() (*credmask.CA, error) {
	if s.opts.CodexHome == "" {
		return nil
	}
	return s.credentialCA
}

// credentialCA is the executor's credential-masking CA (one for every session),
// created on first use; an error is kept and returned to every later caller.
func (s *Server) credentialCA() (*credmask.CA, error) {
	s.caOnce.Do(func() {
		s.ca, s.caErr = credmask.NewCA(&credmask.CAOptions{CodexHome: s.opts.CodexHome, Logger: s.opts.Logger})
	})
	return s.ca, s.caErr
}
