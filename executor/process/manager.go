package process

import (
	"context"
	"crypto/x509"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/execlab/executor/executor/jsonrpc"
	"github.com/execlab/executor/executor/netproxy/credmask"
	"github.com/execlab/executor/executor/shellsnap"
	"github.com/execlab/executor/sandbox"
)

// Options configure a Manager. A nil *Options means all defaults; the struct is never
// mutated.
type Options struct {
	// MaxRetainedBytes is the output retained per process, in bytes. Default 1 MiB.
	MaxRetainedBytes int
	// MaxRetainedChunks is the number of output chunks retained per process.
	// Default 50,000.
	MaxRetainedChunks int
	// ClosedRetention is how long a closed process stays readable. Default 30 s. For a
	// process started with outputAck it counts from the close's acknowledgement.
	ClosedRetention time.Duration
	// MaxUnackedBytes bounds the output retained per process started with outputAck
	// (docs/reliability.md), in bytes: at the bound the reader stops reading the child's
	// output until the client acknowledges. Default DefaultMaxUnackedBytes (64 MiB).
	MaxUnackedBytes int
	// UnackedBudget bounds the unacknowledged output of every outputAck process of every
	// Manager given the same Budget (budget.go): one per executor. Nil: the Manager gets
	// a Budget of its own of DefaultMaxUnackedTotalBytes (64 MiB).
	UnackedBudget *Budget
	// OutputWindow bounds the output bytes pushed and not yet acknowledged per process
	// started with outputAck while attached with Attach. Default DefaultOutputWindow
	// (2 MiB).
	OutputWindow int
	// FlowControlledOutputWindow is OutputWindow while attached with
	// AttachFlowControlled (a transport that bounds its bytes in flight itself). Default
	// DefaultFlowControlledOutputWindow (6 MiB).
	FlowControlledOutputWindow int
	// Logger receives debug logs; nil discards them. Output bytes are never logged.
	Logger *slog.Logger
	// Sandbox launches commands that carry sandbox intent (spec/sandbox.md §2.9). Nil:
	// every process/start with a sandbox or enforceManagedNetwork fails closed with
	// -32602 and nothing is spawned.
	Sandbox *sandbox.Launcher
	// RuntimeReadGrants are files sandboxed commands' stages need readable besides the
	// executor binary (a dynamically linked binary's loader and libraries); added as
	// read entries unless already readable. Default none.
	RuntimeReadGrants []string
	// Home anchors "~/" deny globs when the sandbox context has no userHomeDir (the
	// executor's HOME). Default "".
	Home string
	// TCPUpstreamProxy is `--tcp-upstream-proxy HOST:PORT`: raw TCP must go through
	// that upstream. An executor-local proxy (networkProxy) sends its SOCKS5 TCP through
	// it (netproxy upstream.go); without one that cannot be enforced, so every start
	// with managedNetwork or enforceManagedNetwork and no networkProxy is refused
	// (-32602, the reference's text). Default "": none.
	TCPUpstreamProxy string
	// TransparentTCP (--linux-sandbox-transparent-tcp): a sandboxed start with
	// enforceManagedNetwork gets transparent TCP as if its networkProxy asked for it; one
	// without SOCKS5 then fails in the sandbox (exit 101), and one without networkProxy
	// has no executor-local proxy to capture into, so its managed network admits no
	// client proxy port (spec/network-proxy.md §8.3, probed on codex 0.171.0).
	TransparentTCP bool
	// Guard, when non-nil, is told of every process group started and of every group
	// whose entry is gone, so the groups die with the executor even after kill -9
	// (guard.go). Nil: each group's leader still gets SIGTERM from Pdeathsig.
	Guard *Guard
	// Observer receives process counts (metrics.go). Nil means none.
	Observer Observer
	// ShellSnapshots is the session's shell snapshot cache (snapshot.go), owned and
	// closed by the caller. Nil: a non-null shellSnapshot is refused (-32602).
	ShellSnapshots *shellsnap.Cache
	// Client reaches the session's current client for server→client requests: the
	// network proxy's network/policyRequest (netproxy_decider.go). Nil: every decision
	// callback fails closed (deny not_allowed).
	Client ClientCaller
	// CredentialCA returns the executor's credential-masking CA (one per executor,
	// created on first use under $CODEX_HOME/proxy). Nil: a networkProxy with
	// credentialMasking is refused (-32602), fail closed.
	CredentialCA func() (*credmask.CA, error)
	// UpstreamRoots verifies the upstreams of intercepted tunnels; nil: system roots.
	// Tests set it.
	UpstreamRoots *x509.CertPool
}

func (o *Options) withDefaults() Options {
	var c Options
	if o != nil {
		c = *o
	}
	if c.MaxRetainedBytes <= 0 {
		c.MaxRetainedBytes = DefaultMaxRetainedBytes
	}
	if c.MaxRetainedChunks <= 0 {
		c.MaxRetainedChunks = DefaultMaxRetainedChunks
	}
	if c.MaxUnackedBytes <= 0 {
		c.MaxUnackedBytes = DefaultMaxUnackedBytes
	}
	if c.UnackedBudget == nil {
		c.UnackedBudget = NewBudget(DefaultMaxUnackedTotalBytes)
	}
	if c.OutputWindow <= 0 {
		c.OutputWindow = DefaultOutputWindow
	}
	if c.FlowControlledOutputWindow <= 0 {
		c.FlowControlledOutputWindow = DefaultFlowControlledOutputWindow
	}
	if c.ClosedRetention <= 0 {
		c.ClosedRetention = DefaultClosedRetention
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if c.Observer == nil {
		c.Observer = nopObserver{}
	}
	return c
}

// Manager owns one session's process table: every child, its retained output and the
// goroutines that pump it. All methods are safe for concurrent use.
//
// Process lifetime is deliberately separate from request lifetime: the ctx given to
// Start only bounds the request, never the child; children live until they exit, are
// terminated, or Close kills them.
type Manager struct {
	opts Options
	log  *slog.Logger

	// attachMu serialises Attach and Close's detach; readers use attached lock-free.
	attachMu sync.Mutex
	attached atomic.Pointer[attachment]

	// mu guards the process table; held only for map operations and the Starting →
	// Running transition (so nothing can start after Close begins).
	mu      sync.Mutex
	procs   map[string]*proc
	closedQ []closedEntry // closed processes in closing order, for retention eviction
	closing bool

	// wg counts every goroutine the Manager started; Close waits for it.
	wg sync.WaitGroup

	// creds is the session's credential registry: masked launches reuse the dummies
	// of earlier ones (credmask/registry.go).
	creds credmask.Registry
}

// attachment is the notifier currently attached and the ctx its Notify calls get; ctx is
// cancelled when the attachment changes, which releases a pump blocked in Notify. window
// is the output window of lossless processes on it, in bytes (OutputWindow, or
// FlowControlledOutputWindow on a flow-controlled transport).
type attachment struct {
	n      jsonrpc.Notifier
	ctx    context.Context
	cancel context.CancelFunc
	window int
}

type closedEntry struct {
	id string
	p  *proc
	at time.Time
}

// NewManager returns an empty Manager. It starts nothing.
func NewManager(opts *Options) *Manager {
	o := opts.withDefaults()
	return &Manager{
		opts:  o,
		log:   o.Logger.With("component", "process"),
		procs: make(map[string]*proc),
	}
}

// UnackedBudget returns the Budget the Manager's outputAck processes draw on:
// Options.UnackedBudget, or the Manager's own.
func (m *Manager) UnackedBudget() *Budget { return m.opts.UnackedBudget }

// Attach sets where notifications go; nil detaches. While detached, events are retained
// (process/read recovers them) but not pushed, and they are never replayed as
// notifications later (except a lossless process's unacknowledged ones, docs/reliability.md
// §4). A pump blocked in Notify on the previous notifier is released. Lossless processes
// push at most Options.OutputWindow unacknowledged bytes to n.
func (m *Manager) Attach(n jsonrpc.Notifier) { m.attach(n, m.opts.OutputWindow) }

// AttachFlowControlled is Attach for a notifier whose transport bounds the bytes in flight
// to the client by flow control of its own, so that nothing between the two can overflow
// whatever the executor pushes (a relay stream running ARQ v1: its send window bounds what
// the rendezvous queues; docs/reliability.md §4). Lossless processes then push up to
// Options.FlowControlledOutputWindow: the window only has to cover the path's round trip,
// not to protect a queue.
func (m *Manager) AttachFlowControlled(n jsonrpc.Notifier) {
	m.attach(n, m.opts.FlowControlledOutputWindow)
}

func (m *Manager) attach(n jsonrpc.Notifier, window int) {
	m.attachMu.Lock()
	defer m.attachMu.Unlock()
	m.mu.Lock()
	closing := m.closing
	m.mu.Unlock()
	var next *attachment
	if n != nil && !closing {
		ctx, cancel := context.WithCancel(context.Background())
		next = &attachment{n: n, ctx: ctx, cancel: cancel, window: window}
	}
	if old := m.attached.Swap(next); old != nil {
		old.cancel()
	}
	m.resetAcks(false)
}

// notify pushes one notification to the attached notifier, if any. It blocks while the
// connection's queue is full (back-pressure) until the attachment changes.
func (m *Manager) notify(method string, params any) {
	a := m.attached.Load()
	if a == nil {
		return
	}
	if err := a.n.Notify(a.ctx, method, params); err != nil {
		m.log.Debug("notification dropped", "method", method, "error", err)
	}
}

// Close kills every process group (SIGKILL), stops every pump and waits for every
// goroutine the Manager started, then returns the unacknowledged output of its processes
// to the Budget. Later Starts fail. Close is idempotent.
func (m *Manager) Close() {
	m.mu.Lock()
	already := m.closing
	m.closing = true
	procs := make([]*proc, 0, len(m.procs))
	for _, p := range m.procs {
		procs = append(procs, p)
	}
	m.mu.Unlock()
	if !already {
		m.Attach(nil)
		for _, p := range procs {
			p.mu.Lock()
			if sent, _ := p.signalGroupLocked(syscall.SIGKILL); sent {
				p.killed = true
			}
			q := p.stdin
			pgid := p.pgid
			p.mu.Unlock()
			m.opts.Guard.untrack(pgid)
			if q != nil {
				q.stop()
			}
			p.stopOutputs(0)
		}
		m.resetAcks(true)
	}
	m.wg.Wait()
	m.releaseBudget()
}

// releaseBudget returns to the Budget every byte the Manager's processes still hold
// unacknowledged: Close drops them with the session. Called once every pump has ended,
// so nothing charges it again; a late Ack finds p.budget nil and releases nothing twice.
func (m *Manager) releaseBudget() {
	m.mu.Lock()
	procs := make([]*proc, 0, len(m.procs))
	for _, p := range m.procs {
		procs = append(procs, p)
	}
	m.mu.Unlock()
	for _, p := range procs {
		p.mu.Lock()
		if p.budget != nil {
			p.budget.release(p.ack.budgeted())
			p.budget = nil
		}
		p.mu.Unlock()
	}
}

// lookup returns the live entry for id, evicting it first if its retention has expired.
func (m *Manager) lookup(id string) *proc {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.sweepLocked(time.Now())
	return m.procs[id]
}

// sweepLocked evicts closed entries whose retention has expired (spec/jsonrpc.md §5.4).
// Eviction is lazy: it runs on every table access, so no timer goroutine is needed and
// the clock is whatever time.Now says (fake under testing/synctest).
func (m *Manager) sweepLocked(now time.Time) {
	n := 0
	for _, e := range m.closedQ {
		if now.Sub(e.at) < m.opts.ClosedRetention {
			break
		}
		if m.procs[e.id] == e.p {
			delete(m.procs, e.id)
		}
		m.opts.Guard.untrack(e.p.pgid)
		n++
	}
	if n > 0 {
		clear(m.closedQ[:n])
		m.closedQ = m.closedQ[n:]
	}
}

// noteClosed queues p for eviction ClosedRetention after at.
func (m *Manager) noteClosed(p *proc, at time.Time) {
	m.mu.Lock()
	m.closedQ = append(m.closedQ, closedEntry{id: p.id, p: p, at: at})
	m.mu.Unlock()
}
