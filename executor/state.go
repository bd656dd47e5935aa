package executor

import (
	"sync"

	"github.com/execlab/executor/executor/jsonrpc"
)

// sessionState is what a session owns across connections: the process table.
type sessionState struct {
	// mu guards owner; held briefly.
	mu    sync.Mutex
	owner *conn
	hooks []sessionHook
}

// sessionHook is a per-session component (the process manager) that follows the
// session's attachment and dies with it.
type sessionHook interface {
	Attach(n jsonrpc.Notifier) // nil detaches
	Close()
}

// sessionHookFactories build the per-session components; method files register them.
var sessionHookFactories []func(s *Server, st *sessionState) sessionHook

func newSessionState(s *Server) *sessionState {
	st := &sessionState{}
	for _, f := range sessionHookFactories {
		st.hooks = append(st.hooks, f(s, st))
	}
	return st
}

func (st *sessionState) attach(c *conn) {
	st.mu.Lock()
	st.owner = c
	st.mu.Unlock()
	for _, h := range st.hooks {
		h.Attach(c.rpc)
	}
}

// detach stops pushing notifications if c is still the recorded owner.
func (st *sessionState) detach(c *conn) {
	st.mu.Lock()
	if st.owner != c {
		st.mu.Unlock()
		return
	}
	st.owner = nil
	st.mu.Unlock()
	for _, h := range st.hooks {
		h.Attach(nil)
	}
}

// Close implements session.State: kills the session's processes.
func (st *sessionState) Close() {
	for _, h := range st.hooks {
		h.Close()
	}
}

// connResources are owned by one connection and die with it.
type connResources struct {
	mu      sync.Mutex
	closers []func()
}

// connResourceFactories build per-connection components (fs handles, HTTP client);
// method files register them. Each returns a close function.
var connResourceFactories []func(s *Server, rpc *jsonrpc.Conn, r *connResources) func()

func newConnResources(s *Server, rpc *jsonrpc.Conn) *connResources {
	r := &connResources{}
	for _, f := range connResourceFactories {
		r.closers = append(r.closers, f(s, rpc, r))
	}
	return r
}

func (r *connResources) close() {
	r.mu.Lock()
	closers := r.closers
	r.closers = nil
	r.mu.Unlock()
	for _, f := range closers {
		f()
	}
}
