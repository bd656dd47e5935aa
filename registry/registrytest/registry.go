package registrytest

import (
	"context"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/execlab/executor/registry/rendezvous"
	"github.com/execlab/executor/registry/server"
)

// onlinePoll is how often WaitOnline asks the hub (the hub has no online notification).
const onlinePoll = 20 * time.Millisecond

// Options configures Start. nil means every default; the struct is not modified.
type Options struct {
	// Store is the registration store; nil means a fresh SQLite store in a temp dir, closed
	// at cleanup. A given store is the caller's to close.
	Store server.Store
	// Tokens is the token file's text (server.ParseTokens); empty means one line holding
	// Registry.Token, which then allows every role and environment.
	Tokens string
	// PublicURL maps the listener's address to the URL the registry hands out (and
	// Registry.URL); nil means "http://" + addr. A proxy in front of the registry sets it.
	PublicURL func(addr string) string
	// Hub, when non-nil, adjusts the rendezvous options before rendezvous.New.
	Hub func(*rendezvous.Options)
	// Server, when non-nil, adjusts the server options before server.New.
	Server func(*server.Options)
	// HTTP is given to server.NewHTTPServer; nil means its defaults.
	HTTP *server.HTTPOptions
}

// Registry is a running in-process registry + rendezvous. Its fields are set by Start and
// never change.
type Registry struct {
	// URL is the public URL (Options.PublicURL), the one bundles and registrations carry.
	URL string
	// Addr is the listener's host:port on 127.0.0.1.
	Addr string
	// Token is a random bearer ("tok_" + 32 hex digits); it is the whole token file unless
	// Options.Tokens replaced it.
	Token string
	// TokenFile holds the token file's text (mode 0600), for `--token-file`.
	TokenFile string
	// Store is the registry's store.
	Store server.Store
	// Signer signs the rendezvous URLs; it survives Restart.
	Signer *rendezvous.Signer

	tb     testing.TB
	opts   Options
	tokens *server.Tokens

	mu   sync.Mutex // guards the running instance: the test kills and restarts it while others read Hub
	hub  *rendezvous.Hub
	http *server.HTTPServer
	done chan struct{} // closed when the instance's Serve has returned
}

// Start serves a registry + rendezvous on 127.0.0.1:0 until the test's cleanup. Any setup
// failure fails tb.
func Start(tb testing.TB, o *Options) *Registry {
	tb.Helper()
	var opts Options
	if o != nil {
		opts = *o
	}
	dir := tb.TempDir()
	r := &Registry{tb: tb, opts: opts, Store: opts.Store, Signer: rendezvous.NewRandomSigner()}
	if r.Store == nil {
		r.Store = openStore(tb, dir)
	}
	r.Token, r.TokenFile, r.tokens = writeTokens(tb, dir, opts.Tokens)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	r.Addr = ln.Addr().String()
	r.URL = "http://" + r.Addr
	if opts.PublicURL != nil {
		r.URL = opts.PublicURL(r.Addr)
	}
	r.serve(ln)
	tb.Cleanup(func() {
		r.Kill()
		http.DefaultClient.CloseIdleConnections()
	})
	return r
}

// serve starts one instance (hub, server, HTTP server) on ln.
func (r *Registry) serve(ln net.Listener) {
	ho := &rendezvous.Options{Signer: r.Signer, CurrentGeneration: server.GenerationFunc(r.Store)}
	if r.opts.Hub != nil {
		r.opts.Hub(ho)
	}
	hub, err := rendezvous.New(ho)
	if err != nil {
		ln.Close()
		r.tb.Fatalf("starting the rendezvous: %v", err)
	}
	so := &server.Options{Store: r.Store, Tokens: r.tokens, Hub: hub, Signer: r.Signer, PublicURL: r.URL}
	if r.opts.Server != nil {
		r.opts.Server(so)
	}
	s, err := server.New(so)
	if err != nil {
		ln.Close()
		hub.Close()
		r.tb.Fatalf("starting the registry: %v", err)
	}
	hs := server.NewHTTPServer(s, r.opts.HTTP)
	done := make(chan struct{})
	go func() { defer close(done); _ = hs.Serve(ln) }() // owner: r; ends at Kill
	r.mu.Lock()
	r.hub, r.http, r.done = hub, hs, done
	r.mu.Unlock()
}

// Hub returns the running instance's rendezvous hub, nil after Kill.
func (r *Registry) Hub() *rendezvous.Hub {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.hub
}

// HTTP returns the running instance's HTTP server, nil after Kill.
func (r *Registry) HTTP() *server.HTTPServer {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.http
}

// Online reports whether an executor socket for env is attached to the running hub.
func (r *Registry) Online(env string) bool {
	hub := r.Hub()
	if hub == nil {
		return false
	}
	_, ok := hub.Online(env)
	return ok
}

// WaitOnline waits until Online(env) is want, failing tb when ctx ends first.
func (r *Registry) WaitOnline(ctx context.Context, tb testing.TB, env string, want bool) {
	tb.Helper()
	t := time.NewTicker(onlinePoll)
	defer t.Stop()
	for r.Online(env) != want {
		select {
		case <-ctx.Done():
			tb.Fatalf("waiting for environment %s online=%v at the rendezvous: %v", env, want, ctx.Err())
		case <-t.C:
		}
	}
}

// Kill closes the listener and drops every rendezvous socket; the store stays open. It is
// a no-op when nothing runs.
func (r *Registry) Kill() {
	r.mu.Lock()
	hub, hs, done := r.hub, r.http, r.done
	r.hub, r.http = nil, nil
	r.mu.Unlock()
	if hs == nil {
		return
	}
	hs.Close()
	hub.Close()
	<-done
}

// Restart serves again on the same address after Kill, with the same store and signer.
func (r *Registry) Restart() {
	r.tb.Helper()
	ln, err := net.Listen("tcp", r.Addr)
	if err != nil {
		r.tb.Fatalf("re-listening on %s: %v", r.Addr, err)
	}
	r.serve(ln)
}
