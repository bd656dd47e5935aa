package bench

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/execlab/executor/executor/protocol"
)

// The proxy rows (issue 29): the executor-local network proxy that process/start's
// networkProxy launches for one process (spec/network-proxy.md §2–§5), on both sides.
//
//   - proxy_cpu: the child (curl) downloads a body from the bench's loopback HTTP server
//     through an HTTP CONNECT tunnel of its own proxy (row_proxy_cpu.go).
//   - proxy_setup: the bench opens CONNECT tunnels through a proxy held by an idle child
//     and times each from the dial to the first byte the upstream sends
//     (row_proxy_setup.go).
//   - proxy_idle_memory: the bench holds many idle tunnels through one such proxy and
//     reads the executor's resident memory growth per tunnel (row_proxy_idle_memory.go).
//
// Every row uses proxyConfig, which both executors accept (the conformance scenario
// netproxy_end_to_end.json): full mode, no sandbox, SOCKS5 on, no local binding,
// `localhost` allowlisted. The target is always localhost:PORT, which /etc/hosts maps to
// 127.0.0.1 where the bench's servers listen; an allowlisted local name passes the
// resolution check (§5.2 step 7) on both sides.
var proxyConfig = json.RawMessage(`{"proxy":{"enabled":true,"enableSocks5":true,"enableSocks5Udp":false,` +
	`"allowUpstreamProxy":false,"dangerouslyAllowAllUnixSockets":false,"mode":"full","allowLocalBinding":false,` +
	`"domains":{"localhost":"allow"}},"environmentId":"bench","executionId":"bench"}`)

// proxyEnv is the child's environment before the executor adds its proxy variables.
var proxyEnv = map[string]string{"PATH": "/usr/local/bin:/usr/bin:/bin"}

// proxyHolder is a child process that does nothing but keep its networkProxy open, so
// that the bench can use the proxy itself: its HTTP listener's address is what the child
// printed from its HTTP_PROXY variable.
type proxyHolder struct {
	addr string // host:port of the HTTP (+CONNECT) listener
	stop func() error
}

// holdProxy starts a proxy holder on sess. stop terminates it and waits for its run.
func holdProxy(ctx context.Context, side *Side, sess *session) (*proxyHolder, error) {
	pid := side.processID("proxyhold")
	var (
		mu   sync.Mutex
		out  []byte
		line = make(chan string, 1)
	)
	onOutput := func(o protocol.ProcessOutputNotification) error {
		mu.Lock()
		defer mu.Unlock()
		if out == nil {
			return nil // the line was taken
		}
		out = append(out, o.Chunk...)
		if i := bytes.IndexByte(out, '\n'); i >= 0 {
			line <- string(out[:i])
			out = nil
		}
		return nil
	}
	out = []byte{}
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { // owner: holdProxy's caller, through stop
		_, err := sess.runProcess(runCtx, protocol.ProcessStartParams{
			ProcessID: pid,
			// exec keeps the child's pid, so process/terminate ends it at once.
			Argv:         []string{"sh", "-c", `printf '%s\n' "$http_proxy"; exec sleep 3600`},
			Cwd:          "file:///",
			Env:          proxyEnv,
			NetworkProxy: proxyConfig,
		}, onOutput)
		done <- err
	}()
	// stop ends the holder: process/terminate, then its run, which process/closed ends;
	// after callTimeout the run is cancelled instead.
	stop := func() error {
		_ = sess.call(ctx, protocol.MethodProcessTerminate, &protocol.ProcessTerminateParams{ProcessID: pid}, nil)
		var err error
		select {
		case err = <-done:
		case <-time.After(callTimeout):
			cancel()
			<-done
			err = errors.New("no process/closed after process/terminate")
		}
		cancel()
		if err != nil && !errors.Is(err, context.Canceled) {
			return fmt.Errorf("proxy holder: %w", err)
		}
		return nil
	}
	select {
	case l := <-line:
		addr, ok := strings.CutPrefix(strings.TrimSpace(l), "http://")
		if !ok || addr == "" {
			_ = stop()
			return nil, fmt.Errorf("proxy holder printed %q, want http://HOST:PORT", l)
		}
		return &proxyHolder{addr: strings.TrimSuffix(addr, "/"), stop: stop}, nil
	case err := <-done:
		cancel()
		return nil, fmt.Errorf("proxy holder ended before printing its proxy: %v", err)
	case <-time.After(callTimeout):
		_ = stop()
		return nil, errors.New("proxy holder printed nothing")
	}
}

// greeter is a loopback TCP server for the proxy rows: on every connection it writes one
// byte at once (the first byte proxy_setup waits for) and then holds the connection,
// reading and discarding, until the peer closes it or the run ends.
type greeter struct {
	ln   net.Listener
	port string
	mu   sync.Mutex
	// conns are the open connections; guarded by mu. Closed by close.
	conns map[net.Conn]struct{}
	// wg counts the accept loop and one routine per connection, each stopped by close.
	wg sync.WaitGroup
}

// greeterFor returns the run's greeter, starting it on first use.
func (e *Env) greeterFor() (*greeter, error) {
	if e.greeter != nil {
		return e.greeter, nil
	}
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("starting the greeter: %w", err)
	}
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	g := &greeter{ln: ln, port: port, conns: map[net.Conn]struct{}{}}
	g.wg.Add(1)
	go g.accept() // owner: g.close
	e.greeter = g
	e.onClose(g.close)
	return g, nil
}

func (g *greeter) accept() {
	defer g.wg.Done()
	for {
		c, err := g.ln.Accept()
		if err != nil {
			return // closed by close
		}
		g.mu.Lock()
		if g.conns == nil { // closing
			g.mu.Unlock()
			c.Close()
			return
		}
		g.conns[c] = struct{}{}
		g.wg.Add(1)
		g.mu.Unlock()
		go g.serve(c) // owner: g.close, which closes c
	}
}

func (g *greeter) serve(c net.Conn) {
	defer g.wg.Done()
	defer func() {
		g.mu.Lock()
		if g.conns != nil {
			delete(g.conns, c)
		}
		g.mu.Unlock()
		c.Close()
	}()
	if _, err := c.Write([]byte{'g'}); err != nil {
		return
	}
	var buf [512]byte
	for {
		if _, err := c.Read(buf[:]); err != nil {
			return
		}
	}
}

// close stops accepting, closes every connection and waits for their routines.
func (g *greeter) close() {
	_ = g.ln.Close()
	g.mu.Lock()
	conns := g.conns
	g.conns = nil
	g.mu.Unlock()
	for c := range conns {
		c.Close()
	}
	g.wg.Wait()
}

// bodyDigest returns the hex SHA-256 of the first n bytes of srv's body, computed once
// per size and run.
func (e *Env) bodyDigest(srv *httpServer, n int64) string {
	if d, ok := e.digests[n]; ok {
		return d
	}
	h := sha256.New()
	for off := int64(0); off < n; {
		p := off % int64(len(srv.pattern))
		k := min(n-off, int64(len(srv.pattern))-p)
		h.Write(srv.pattern[p : p+k])
		off += k
	}
	d := hex.EncodeToString(h.Sum(nil))
	if e.digests == nil {
		e.digests = map[int64]string{}
	}
	e.digests[n] = d
	return d
}
