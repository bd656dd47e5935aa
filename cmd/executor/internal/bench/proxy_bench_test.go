package bench

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"testing"

	"github.com/execlab/executor/executor/netproxy"
)

// In-process benchmarks of the proxy rows' two hot paths (issue 29), on the same proxy
// config and with the same client as the rows, without an executor around the proxy.
// executor/netproxy's own benchmarks cover its start/close and the client → upstream
// direction of a tunnel; these add what proxy_setup and proxy_cpu time: a tunnel's
// setup up to the upstream's first byte, and the upstream → client direction.

// startProxy starts a netproxy.Proxy with config (a process's networkProxy, as
// proxyConfig) for process "bench"; Cleanup closes it.
func startProxy(tb testing.TB, config json.RawMessage) *netproxy.Proxy {
	tb.Helper()
	cfg, err := netproxy.Decode(config)
	if err != nil {
		tb.Fatal(err)
	}
	pol, err := cfg.Check("bench", false)
	if err != nil {
		tb.Fatal(err)
	}
	px, err := netproxy.Start(pol, nil)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(px.Close)
	return px
}

// BenchmarkProxySetup: dial + CONNECT localhost:PORT + the greeter's first byte through
// the tunnel (openTunnel, as proxy_setup), then close; one tunnel per op.
func BenchmarkProxySetup(b *testing.B) {
	e := &Env{}
	defer e.close()
	g, err := e.greeterFor()
	if err != nil {
		b.Fatal(err)
	}
	px := startProxy(b, proxyConfig)
	ctx := context.Background()
	for b.Loop() {
		c, err := openTunnel(ctx, px.HTTPAddr(), g.port)
		if err != nil {
			b.Fatal(err)
		}
		c.Close()
	}
}

// BenchmarkProxySetupBaseline: the floor under BenchmarkProxySetup and proxy_setup on
// this machine: dial the greeter directly and read its byte, no proxy; one connection per
// op. A tunnel costs at least two of these (client → proxy, proxy → greeter).
func BenchmarkProxySetupBaseline(b *testing.B) {
	e := &Env{}
	defer e.close()
	g, err := e.greeterFor()
	if err != nil {
		b.Fatal(err)
	}
	var one [1]byte
	for b.Loop() {
		c, err := net.Dial("tcp4", "127.0.0.1:"+g.port)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := io.ReadFull(c, one[:]); err != nil || one[0] != 'g' {
			b.Fatalf("read %q, %v; want the greeter's byte", one[0], err)
		}
		c.Close()
	}
}

// BenchmarkProxyDownload: bytes per second from a loopback upstream to the client through
// one established CONNECT tunnel (the direction proxy_cpu measures); 1 MiB per op.
func BenchmarkProxyDownload(b *testing.B) {
	const chunk = 1 << 20
	up, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer up.Close()
	// The upstream writes the greeter's byte, waits for one byte, then writes zeros until
	// the tunnel closes.
	served := make(chan struct{})
	go func() { // owner: this benchmark; its cleanup waits on served
		defer close(served)
		c, err := up.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		if _, err := c.Write([]byte{'g'}); err != nil {
			return
		}
		// Zeros only once the client says go: openTunnel wants the greeting alone.
		if _, err := io.ReadFull(c, make([]byte, 1)); err != nil {
			return
		}
		buf := make([]byte, 256<<10)
		for {
			if _, err := c.Write(buf); err != nil {
				return
			}
		}
	}()
	// Cleanups run last-in first-out: the proxy closes (ending the tunnel's upstream
	// connection), then the upstream routine is waited for.
	b.Cleanup(func() { up.Close(); <-served })
	px := startProxy(b, proxyConfig)
	_, port, _ := net.SplitHostPort(up.Addr().String())
	c, err := openTunnel(context.Background(), px.HTTPAddr(), port)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := c.Write([]byte{'x'}); err != nil {
		b.Fatal(err)
	}
	buf := make([]byte, chunk)
	b.SetBytes(chunk)
	for b.Loop() {
		if _, err := io.ReadFull(c, buf); err != nil {
			b.Fatal(err)
		}
	}
	c.Close()
}
