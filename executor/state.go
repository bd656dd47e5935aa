package executor

import (
	"sync"

	"github.com/execlab/executor/executor/fs"
	"github.com/execlab/executor/executor/httpreq"
	"github.com/execlab/executor/executor/jsonrpc"
	"github.com/execlab/executor/executor/process"
	"github.com/execlab/executor/executor/shellsnap"
	"github.com/execlab/executor/executor/tunnel"
)

// sessionState is what a session owns across connections: the process table and the
// shell snapshot cache (spec/capabilities-0.171.0.md §3.3: per session).
type sessionState struct {
	procs     *process.Manager
	snapshots *shellsnap.Cache
	// client reaches whichever connection the session is attached to, for server→client
	// requests and best-effort notifications (the network proxy's network/policyRequest
	// and network/policyDecision, spec/network-proxy.md §6–§7). With none attached they
	// fail with jsonrpc.ErrNoClient; a call in flight fails with jsonrpc.ErrConnClosed
	// when its connection goes and is not re-sent on the resumed one (codex 0.171.0:
	// the new connection numbers its requests from 1 again).
	client jsonrpc.ClientLink

	// mu guards owner; held briefly.
	mu    sync.Mutex
	owner *conn
}

func newSessionState(s *Server) *sessionState {
	snaps := shellsnap.NewCache()
	st := &sessionState{snapshots: snaps}
	st.procs = process.NewManager(&process.Options{
		MaxRetainedBytes:           s.opts.MaxRetainedBytes,
		MaxRetainedChunks:          s.opts.MaxRetainedChunks,
		MaxUnackedBytes:            s.opts.MaxUnackedBytes,
		UnackedBudget:              s.budget,
		OutputWindow:               s.opts.OutputWindow,
		FlowControlledOutputWindow: s.opts.FlowControlledOutputWindow,
		Logger:                     s.opts.Logger,
		Sandbox:                    s.opts.Sandbox,
		RuntimeReadGrants:          s.runtimeGrants,
		Home:                       homeDir(),
		TCPUpstreamProxy:           s.opts.TCPUpstreamProxy,
		TransparentTCP:             s.opts.LinuxSandboxTransparentTCP,
		Guard:                      s.opts.ProcessGuard,
		Observer:                   s.opts.Observer,
		ShellSnapshots:             snaps,
		Client:                     &st.client,
		CredentialCA:               s.credentialCAFunc(),
		UpstreamRoots:              s.opts.UpstreamRoots,
	})
	return st
}

// attach routes the session's notifications to c (before the initialize response is
// written, so on resume they may precede it).
func (st *sessionState) attach(c *conn) {
	st.mu.Lock()
	st.owner = c
	st.mu.Unlock()
	st.client.Attach(c.rpc)
	if c.flowControlled {
		st.procs.AttachFlowControlled(c.rpc)
		return
	}
	st.procs.Attach(c.rpc)
}

// detach stops pushing notifications if c is still the recorded owner; events are then
// retained for process/read but never replayed as notifications.
func (st *sessionState) detach(c *conn) {
	st.mu.Lock()
	if st.owner != c {
		st.mu.Unlock()
		return
	}
	st.owner = nil
	st.mu.Unlock()
	st.client.Detach(c.rpc)
	st.procs.Attach(nil)
}

// Close implements session.State: cancels running shell snapshot captures (their
// process groups are killed) and kills the session's processes.
func (st *sessionState) Close() {
	st.snapshots.Close()
	st.procs.Close()
}

// connResources are owned by one connection and die with it (spec/jsonrpc.md §2.2):
// fs/open handles, streamed HTTP bodies and the fs/watchMissing set (connection-scoped:
// a resumed session starts with none, capabilities-0.171.0.md §7.2).
type connResources struct {
	fsHandles *fs.Handles
	http      *httpreq.Client
	watch     *fs.MissingWatcher
	tunnels   *tunnel.Table // tunnel/* (docs/protocol-extensions.md)
}

func newConnResources(s *Server, rpc *jsonrpc.Conn) *connResources {
	return &connResources{fsHandles: s.fs.NewHandles(), http: httpreq.New(nil, rpc), watch: fs.NewMissingWatcher(rpc),
		tunnels: tunnel.NewTable(rpc, s.tunnelOptions())}
}

// close cancels HTTP body streams, the armed fs/watchMissing set and fs/open handles;
// it returns after the streams' and the watch's goroutines have exited.
func (r *connResources) close() {
	r.tunnels.Close()
	r.http.Close()
	r.watch.Close()
	r.fsHandles.CloseAll()
}
