package httpreq

import (
	"context"
	"errors"
	"net/http"
	"os"
	"sync"

	"github.com/execlab/executor/executor/jsonrpc"
	"github.com/execlab/executor/jsonwire"
)

// Options configure a Client. Nil means defaults; the struct is never mutated.
type Options struct {
	// LookupEnv reads the executor's environment (valueEnvVar and proxy variables).
	// Nil = os.LookupEnv.
	LookupEnv func(string) (string, bool)
	// Transport overrides the base transport (tests). Nil = a clone of
	// http.DefaultTransport with our proxy selection.
	Transport http.RoundTripper
}

// Client serves http/request for one connection and owns its streams. Safe for
// concurrent use. Close cancels all streams and waits for their pumps.
type Client struct {
	notifier  jsonrpc.Notifier
	lookupEnv func(string) (string, bool)
	transport http.RoundTripper

	// ctx is the lifetime of the connection's streams (not of any one request); cancel ends
	// every stream's HTTP exchange.
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup // one per started pump

	// mu guards active and closed; never held across I/O or Notify.
	mu     sync.Mutex
	active map[string]*stream // reserved streaming requestIds
	closed bool
}

// New returns a Client that sends bodyDelta notifications through n.
func New(opts *Options, n jsonrpc.Notifier) *Client {
	c := &Client{notifier: n, lookupEnv: os.LookupEnv, active: map[string]*stream{}}
	if opts != nil && opts.LookupEnv != nil {
		c.lookupEnv = opts.LookupEnv
	}
	if opts != nil && opts.Transport != nil {
		c.transport = opts.Transport
	} else {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.Proxy = proxyFunc(c.lookupEnv)
		c.transport = t
	}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	return c
}

var errClosed = errors.New("httpreq: client closed")

// reserve claims a streaming requestId until its last frame.
func (c *Client) reserve(id string, s *stream) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return errClosed
	}
	if _, ok := c.active[id]; ok {
		return jsonwire.InvalidParams("http/request streamResponse requestId `%s` is already active", id)
	}
	c.active[id] = s
	return nil
}

func (c *Client) release(id string) {
	c.mu.Lock()
	delete(c.active, id)
	c.mu.Unlock()
}

// Close cancels every stream (their terminal frames may not be delivered), closes bodies
// whose pumps never started, and waits for running pumps to exit.
func (c *Client) Close() {
	c.mu.Lock()
	c.closed = true
	pending := make([]*stream, 0, len(c.active))
	for _, s := range c.active {
		pending = append(pending, s)
	}
	c.mu.Unlock()
	c.cancel()
	for _, s := range pending {
		s.abandon()
	}
	c.wg.Wait()
	if t, ok := c.transport.(*http.Transport); ok {
		t.CloseIdleConnections()
	}
}
