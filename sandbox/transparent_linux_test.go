package sandbox_test

import (
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/execlab/executor/sandbox"
	"github.com/execlab/executor/sandbox/sandboxtest"
)

// socksStub is a loopback stand-in for the executor's SOCKS5 policy: it records each
// CONNECT target ("name:port", "ipv4:port" or "[ipv6]:port"), grants those in allow
// (answering "hello <target>" and closing) and refuses the rest with reply 2.
type socksStub struct {
	ln    net.Listener
	allow map[string]bool
	wg    sync.WaitGroup
	mu    sync.Mutex
	seen  []string
}

func newSOCKSStub(t *testing.T, allow ...string) *socksStub {
	t.Helper()
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &socksStub{ln: ln, allow: map[string]bool{}}
	for _, a := range allow {
		s.allow[a] = true
	}
	s.wg.Add(1)
	go func() { // one connection at a time: the probe dials one address after another
		defer s.wg.Done()
		for c, err := ln.Accept(); err == nil; c, err = ln.Accept() {
			s.serve(c)
			c.Close()
		}
	}()
	t.Cleanup(func() { ln.Close(); s.wg.Wait() })
	return s
}

func (s *socksStub) port() string { return strconv.Itoa(s.ln.Addr().(*net.TCPAddr).Port) }

func (s *socksStub) targets() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.seen...)
}

func (s *socksStub) serve(c net.Conn) {
	buf := make([]byte, 512)
	if _, err := io.ReadFull(c, buf[:3]); err != nil {
		return
	}
	c.Write([]byte{5, 0})
	if _, err := io.ReadFull(c, buf[:4]); err != nil {
		return
	}
	var host string
	switch buf[3] {
	case 1:
		io.ReadFull(c, buf[:4])
		host = net.IP(buf[:4]).String()
	case 4:
		io.ReadFull(c, buf[:16])
		host = "[" + net.IP(buf[:16]).String() + "]"
	case 3:
		io.ReadFull(c, buf[:1])
		n := int(buf[0])
		io.ReadFull(c, buf[:n])
		host = string(buf[:n])
	}
	if _, err := io.ReadFull(c, buf[:2]); err != nil {
		return
	}
	target := host + ":" + strconv.Itoa(int(binary.BigEndian.Uint16(buf)))
	s.mu.Lock()
	s.seen = append(s.seen, target)
	s.mu.Unlock()
	if !s.allow[target] {
		c.Write([]byte{5, 2, 0, 1, 0, 0, 0, 0, 0, 0})
		return
	}
	c.Write([]byte{5, 0, 0, 1, 127, 0, 0, 1, 0, 0})
	fmt.Fprintf(c, "hello %s\n", target)
}

func TestManaged_TransparentTCP(t *testing.T) {
	l := sandbox.NewLauncher(sandboxtest.Require(t, sandbox.BackendBubblewrap), nil)
	stub := newSOCKSStub(t, "allowed.test:80", "10.1.2.3:81")
	tmp := t.TempDir()
	env := append(baseEnv(), "TMPDIR="+tmp, "ALL_PROXY=socks5h://127.0.0.1:"+stub.port())
	mn := &sandbox.ManagedNetwork{TransparentTcp: true}
	ctx := managedCtx("restricted", entryJSON(specialJSON("root"), "read"))

	// Names resolve to fake addresses in order (allowed.test first: 198.18.0.1 and
	// fdc0:de00::1) and reach the policy as names, over IPv4 and IPv6; literals go as
	// literals; a refused target is reset after the connection was accepted; loopback
	// stays in the namespace (nothing listens there).
	res := managedRun(t, l, ctx, mn, env, "read-from", "allowed.test:80", "[fdc0:de00::1]:80", "denied.test:443",
		"10.1.2.3:81", "198.18.0.99:80", "127.0.0.1:"+stub.port())
	want := strings.Join([]string{
		"allowed.test:80 hello allowed.test:80",
		"[fdc0:de00::1]:80 hello allowed.test:80",
		"denied.test:443 ECONNRESET",
		"10.1.2.3:81 hello 10.1.2.3:81",
		"198.18.0.99:80 ECONNRESET",
		"127.0.0.1:" + stub.port() + " ECONNREFUSED",
	}, "\n")
	if got := strings.TrimSpace(res.stdout); got != want || res.code != 0 {
		t.Errorf("direct connections: got %q (exit %d, stderr %q), want %q", got, res.code, res.stderr, want)
	}
	// A refused connection is reset after the command's first bytes or a grace period;
	// on a loaded machine the dialer may still see the reset as a failed connect and
	// try denied.test's IPv6 address too, so it may be asked for twice.
	got := strings.Join(stub.targets(), " ")
	got = strings.Replace(got, "denied.test:443 denied.test:443", "denied.test:443", 1)
	if want := "allowed.test:80 allowed.test:80 denied.test:443 10.1.2.3:81"; got != want {
		t.Errorf("SOCKS5 targets: got %q, want %q", got, want)
	}

	// The command holds no capability and cannot take or make a tun interface.
	res = managedRun(t, l, ctx, mn, env, "status")
	if want := "CapPrm: 0000000000000000\nCapEff: 0000000000000000\nNoNewPrivs: 1\nSeccomp: 2"; strings.TrimSpace(res.stdout) != want {
		t.Errorf("status: got %q (stderr %q), want %q", res.stdout, res.stderr, want)
	}
	res = managedRun(t, l, ctx, mn, env, "tunsetiff")
	if got := strings.TrimSpace(res.stdout); got != "codextun EBUSY\nothertun EPERM" {
		t.Errorf("tun device from the command: got %q (stderr %q), want codextun EBUSY, othertun EPERM", got, res.stderr)
	}

	// Fail closed: without a SOCKS5 proxy variable nothing could carry the captured
	// connections, so the command does not run.
	_, httpPort := newHostProxy(t)
	res = managedRun(t, l, "", mn, append(baseEnv(), "TMPDIR="+tmp, "HTTP_PROXY=http://127.0.0.1:"+httpPort), "status")
	const refusal = "codex-linux-sandbox: failed to prepare transparent TCP: transparent TCP requires managed SOCKS5"
	if res.code != 101 || strings.TrimSpace(res.stderr) != refusal || res.stdout != "" {
		t.Errorf("no SOCKS5 route: got exit %d stdout %q stderr %q, want 101 %q", res.code, res.stdout, res.stderr, refusal)
	}
	if left := proxyDirsLeft(t, tmp); len(left) > 0 {
		t.Errorf("socket directories left after exit: %q", left)
	}
}
