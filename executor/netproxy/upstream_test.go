package netproxy_test

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"testing"

	"github.com/execlab/executor/executor/netproxy"
)

// tcpUpstream is an HTTP CONNECT proxy on 127.0.0.1 standing in for the executor's
// --tcp-upstream-proxy: it records each request head, refuses hosts named refuse.*
// with 403, and connects the others to 127.0.0.1 at the requested port.
type tcpUpstream struct {
	ln    net.Listener
	mu    sync.Mutex
	heads []string
	wg    sync.WaitGroup
}

func startTCPUpstream(t *testing.T) *tcpUpstream {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	u := &tcpUpstream{ln: ln}
	u.wg.Add(1)
	go func() {
		defer u.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			u.wg.Add(1)
			go func() { defer u.wg.Done(); u.serve(c) }()
		}
	}()
	t.Cleanup(func() { ln.Close(); u.wg.Wait() })
	return u
}

func (u *tcpUpstream) serve(c net.Conn) {
	defer c.Close()
	br := bufio.NewReader(c)
	var head strings.Builder
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			return
		}
		head.WriteString(line)
		if line == "\r\n" {
			break
		}
	}
	u.mu.Lock()
	u.heads = append(u.heads, head.String())
	u.mu.Unlock()
	target := strings.Fields(head.String())[1]
	host, port, _ := net.SplitHostPort(target)
	if strings.HasPrefix(host, "refuse.") {
		io.WriteString(c, "HTTP/1.1 403 Forbidden\r\ncontent-length: 0\r\n\r\n")
		return
	}
	origin, err := net.Dial("tcp", net.JoinHostPort("127.0.0.1", port))
	if err != nil {
		io.WriteString(c, "HTTP/1.1 502 Bad Gateway\r\n\r\n")
		return
	}
	defer origin.Close()
	io.WriteString(c, "HTTP/1.1 200 Connection established\r\n\r\n")
	go func() { _, _ = io.Copy(origin, br); origin.(*net.TCPConn).CloseWrite() }()
	_, _ = io.Copy(c, origin)
}

func (u *tcpUpstream) seen() []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]string(nil), u.heads...)
}

// startUpstreamProxy starts a proxy with SOCKS5 whose executor has a TCP upstream.
func startUpstreamProxy(t *testing.T, up *tcpUpstream, allowLocal, allowUpstream bool) *netproxy.Proxy {
	t.Helper()
	raw := `{"proxy":{"enabled":true,"enableSocks5":true,"enableSocks5Udp":false,` +
		`"allowUpstreamProxy":` + boolText(allowUpstream) + `,"dangerouslyAllowAllUnixSockets":false,"mode":"full",` +
		`"allowLocalBinding":` + boolText(allowLocal) + `,"domains":{"localhost":"allow","127.0.0.1":"allow","origin.test":"allow","refuse.test":"allow"}}}`
	pol := checkedPolicy(t, raw)
	px, err := netproxy.Start(pol, &netproxy.Options{TCPUpstream: up.ln.Addr().String(),
		Resolve: func(context.Context, string) ([]netip.Addr, error) {
			return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(px.Close)
	return px
}

func boolText(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

// With a TCP upstream (codex 0.171.0 --tcp-upstream-proxy), allowed SOCKS5 TCP goes
// through it as CONNECT, and the cases the reference refuses get reply 5 without
// reaching it (probed on 0.171.0 with a recording upstream).
func TestProxy_SOCKS5ThroughTCPUpstream(t *testing.T) {
	_, port := upstream(t)
	up := startTCPUpstream(t)

	px := startUpstreamProxy(t, up, true, true)
	if rep := socksConnect(t, px.SOCKSAddr(), "origin.test", port); rep != 0 {
		t.Fatalf("origin.test through the upstream: reply %d, want 0", rep)
	}
	want := "CONNECT origin.test:" + port + " HTTP/1.1\r\nhost: origin.test:" + port + "\r\n\r\n"
	if got := up.seen(); len(got) != 1 || got[0] != want {
		t.Fatalf("upstream saw %q, want [%q]", got, want)
	}
	for _, tt := range []struct {
		host string
		rep  byte
	}{{"refuse.test", 5}, {"127.0.0.1", 5}} {
		if rep := socksConnect(t, px.SOCKSAddr(), tt.host, port); rep != tt.rep {
			t.Errorf("%s: reply %d, want %d", tt.host, rep, tt.rep)
		}
	}
	if got := up.seen(); len(got) != 2 || !strings.HasPrefix(got[1], "CONNECT refuse.test:") {
		t.Errorf("upstream saw %q: want the refused CONNECT and no IP literal", got)
	}

	for _, tt := range []struct {
		name                      string
		allowLocal, allowUpstream bool
		host                      string
		rep                       byte
	}{
		{"upstream disabled by policy", true, false, "origin.test", 5},
		{"local address enforcement", false, true, "localhost", 5},
		{"name resolving only to loopback", false, true, "origin.test", 2},
	} {
		px := startUpstreamProxy(t, up, tt.allowLocal, tt.allowUpstream)
		before := len(up.seen())
		if rep := socksConnect(t, px.SOCKSAddr(), tt.host, port); rep != tt.rep {
			t.Errorf("%s: reply %d, want %d", tt.name, rep, tt.rep)
		}
		if n := len(up.seen()); n != before {
			t.Errorf("%s: the upstream was contacted", tt.name)
		}
	}

	// The HTTP listener still dials directly (the reference's CONNECT route=direct).
	px = startUpstreamProxy(t, up, true, true)
	c := proxiedClient(px)
	res, err := c.Get("http://localhost:" + port + "/direct")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK || len(up.seen()) != 2 {
		t.Errorf("HTTP through the proxy: %d, upstream saw %d heads, want 200 and still 2", res.StatusCode, len(up.seen()))
	}
}
