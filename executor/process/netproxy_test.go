package process_test

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/execlab/executor/executor/protocol"
	"github.com/execlab/executor/jsonwire"
)

// proxyConfig is a valid networkProxy member with the given proxy members added.
func proxyConfig(extra string) json.RawMessage {
	return json.RawMessage(`{"proxy":{"enabled":true,"enableSocks5":true,"enableSocks5Udp":false,"allowUpstreamProxy":false,` +
		`"dangerouslyAllowAllUnixSockets":false,"mode":"full","allowLocalBinding":false` + extra + `}}`)
}

// TestStart_NetworkProxyEnvironment: the child's proxy variables point at the process's
// own listeners and overwrite the client's (spec/network-proxy.md §4); once the process
// is closed, the listeners refuse connections (§3).
func TestStart_NetworkProxyEnvironment(t *testing.T) {
	m := newManager(t, nil)
	p := startParams("env", tmpURI(t), "env")
	p.Env["HTTP_PROXY"] = "http://user-proxy.invalid:1"
	p.Env["NO_PROXY"] = "keep.example"
	p.Env["GIT_HTTP_PROXY"] = "kept"
	p.NetworkProxy = proxyConfig(`,"domains":{"localhost":"allow"}`)
	mustStart(t, m, p)
	out, _ := readUntilClosed(t, m, "env")
	env := map[string]string{}
	for _, line := range strings.Split(string(out[protocol.StreamStdout]), "\n") {
		if k, v, ok := strings.Cut(line, "="); ok {
			env[k] = v
		}
	}
	httpURL, socksURL := env["HTTP_PROXY"], env["ALL_PROXY"]
	if !strings.HasPrefix(httpURL, "http://127.0.0.1:") || !strings.HasPrefix(socksURL, "socks5h://127.0.0.1:") {
		t.Fatalf("HTTP_PROXY=%q ALL_PROXY=%q, want the proxy's loopback listeners", httpURL, socksURL)
	}
	for k, want := range map[string]string{
		"https_proxy": httpURL, "NPM_CONFIG_PROXY": httpURL, "DOCKER_HTTPS_PROXY": httpURL, "ftp_proxy": socksURL,
		"NO_PROXY": "", "no_proxy": "", "CODEX_NETWORK_PROXY_ACTIVE": "1", "CODEX_NETWORK_ALLOW_LOCAL_BINDING": "0",
		"NODE_USE_ENV_PROXY": "1", "ELECTRON_GET_USE_PROXY": "true", "GIT_HTTP_PROXY": "kept",
	} {
		if got, ok := env[k]; !ok || got != want {
			t.Errorf("%s = %q (present %v), want %q", k, got, ok, want)
		}
	}
	for _, u := range []string{strings.TrimPrefix(httpURL, "http://"), strings.TrimPrefix(socksURL, "socks5h://")} {
		waitRefused(t, u)
	}
}

// waitRefused waits (bounded) until nothing listens on addr any more: the proxy is
// closed by its own routine right after the process closes.
func waitRefused(t *testing.T, addr string) {
	t.Helper()
	for range 200 {
		c, err := net.Dial("tcp", addr)
		if errors.Is(err, syscall.ECONNREFUSED) {
			return
		}
		if err == nil {
			c.Close()
		}
		time.Sleep(10 * time.Millisecond) // the proxy closes asynchronously, just after process/closed
	}
	t.Errorf("%s still accepts connections after process/closed", addr)
}

// TestStart_NetworkProxyTerminate: terminate closes the proxy of a running process.
func TestStart_NetworkProxyTerminate(t *testing.T) {
	m := newManager(t, nil)
	p := startParams("term", tmpURI(t), "sh", "-c", `echo "$HTTP_PROXY"; exec sleep 30`)
	p.NetworkProxy = proxyConfig(``)
	mustStart(t, m, p)
	var after uint64
	res, err := m.Read(context.Background(), &protocol.ProcessReadParams{ProcessID: "term", AfterSeq: &after, WaitMs: u64(10000)})
	if err != nil || len(res.Chunks) == 0 {
		t.Fatalf("Read: %v %+v", err, res)
	}
	addr := strings.TrimPrefix(strings.TrimSpace(string(res.Chunks[0].Chunk)), "http://")
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatalf("the proxy of a running process refuses: %v", err)
	}
	c.Close()
	if _, err := m.Terminate(context.Background(), &protocol.ProcessTerminateParams{ProcessID: "term"}); err != nil {
		t.Fatal(err)
	}
	waitRefused(t, addr)
}

// TestStart_NetworkProxyFailsClosed: what is not implemented is refused, never run
// without its proxy (credential masking), and a sandboxed proxy launch without sandbox
// support is refused rather than run with host networking (spec/network-proxy.md §8.2).
func TestStart_NetworkProxyFailsClosed(t *testing.T) {
	m := newManager(t, nil)
	tests := map[string]struct {
		edit func(p *protocol.ProcessStartParams)
		msg  string
	}{
		"credential masking": {func(p *protocol.ProcessStartParams) { p.NetworkProxy = proxyConfig(`,"credentialMasking":true`) },
			"network proxy launch is unsupported on this executor"},
		"enforced managed network without sandbox support": {func(p *protocol.ProcessStartParams) {
			p.NetworkProxy, p.EnforceManagedNetwork = proxyConfig(``), true
		}, "sandbox intent cannot be enforced on this executor: sandbox support is not configured"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			p := startParams("refused", tmpURI(t), "true")
			tc.edit(p)
			_, err := m.Start(context.Background(), p)
			var je *jsonwire.Error
			if !errors.As(err, &je) || je.Code != -32602 || je.Message != tc.msg {
				t.Fatalf("got %v, want -32602 %s", err, tc.msg)
			}
		})
	}
}

// TestStart_NetworkProxyOutlivesExit: the proxy stays up after the child exits while a
// background child still holds its output open, and closes with process/closed (§3).
func TestStart_NetworkProxyOutlivesExit(t *testing.T) {
	m := newManager(t, nil)
	p := startParams("held", tmpURI(t), "sh", "-c", `echo "$HTTP_PROXY"; (sleep 2) &`)
	p.NetworkProxy = proxyConfig(``)
	mustStart(t, m, p)
	var after uint64
	addr := ""
	exited := false
	for range 50 { // until the address is read and the exit is known, bounded
		res, err := m.Read(context.Background(), &protocol.ProcessReadParams{ProcessID: "held", AfterSeq: &after, WaitMs: u64(200)})
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range res.Chunks {
			if addr == "" {
				addr = strings.TrimPrefix(strings.TrimSpace(string(c.Chunk)), "http://")
			}
			after = c.Seq
		}
		if res.Closed {
			t.Fatal("closed before the background child ended")
		}
		if res.Exited && addr != "" {
			exited = true
			break
		}
	}
	if !exited {
		t.Fatal("the shell did not exit")
	}
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatalf("proxy of an exited but not closed process refuses: %v", err)
	}
	c.Close()
	readUntilClosed(t, m, "held")
	waitRefused(t, addr)
}
