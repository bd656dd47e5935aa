package sandbox_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/execlab/executor/sandbox"
	"github.com/execlab/executor/sandbox/policy"
	"github.com/execlab/executor/sandbox/sandboxtest"
)

// newHostProxy starts a loopback stand-in for an HTTP proxy: a proxied request gets
// "proxied <METHOD> <URL>", a CONNECT tunnel answers each line with "tunnel:<line>".
func newHostProxy(t *testing.T) (srv *httptest.Server, port string) {
	t.Helper()
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodConnect {
			fmt.Fprintf(w, "proxied %s %s", r.Method, r.URL)
			return
		}
		c, rw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			return
		}
		defer c.Close()
		io.WriteString(c, "HTTP/1.1 200 Connection established\r\n\r\n")
		line, err := bufio.NewReader(rw).ReadString('\n')
		if err == nil {
			io.WriteString(c, "tunnel:"+line)
		}
	}))
	t.Cleanup(srv.Close)
	_, port, _ = net.SplitHostPort(srv.Listener.Addr().String())
	return srv, port
}

// managedRun runs the test binary as probe inside a managed-network sandbox. ctxJSON
// "" means no sandbox field (the executor's disabled-profile deviation).
func managedRun(t *testing.T, l *sandbox.Launcher, ctxJSON string, mn *sandbox.ManagedNetwork, env []string, probe string, args ...string) result {
	t.Helper()
	var p *policy.Policy
	if ctxJSON != "" {
		p = resolveFor(t, ctxJSON, "/", envValue(env, "TMPDIR"), l)
	}
	return runRequest(t, l, &sandbox.Request{Policy: p, EnforceManagedNetwork: true, ManagedNetwork: mn,
		Argv: append([]string{l.Executable()}, args...), Cwd: "/", Env: append(env, probeEnv+"="+probe)})
}

// proxyDirsLeft lists proxy socket directories left under tmp.
func proxyDirsLeft(t *testing.T, tmp string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(tmp, "codex-linux-sandbox-proxy-*"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestManaged_ProxyRouting(t *testing.T) {
	l := sandbox.NewLauncher(sandboxtest.Require(t, sandbox.BackendBubblewrap), nil)
	_, port := newHostProxy(t)
	tmp := t.TempDir()
	env := append(baseEnv(), "TMPDIR="+tmp, "HTTP_PROXY=http://127.0.0.1:"+port,
		"https_proxy=http://localhost:"+port+"/", "NO_PROXY=localhost,127.0.0.1", "YARN_HTTP_PROXY=http://example.com:8080")
	workspace := managedCtx("restricted", entryJSON(specialJSON("root"), "read"), entryJSON(pathJSON(tmp), "write"))
	for _, tc := range []struct{ name, ctx string }{
		{"no sandbox field (disabled profile deviation)", ""},
		{"disabled profile", `{"permissions":{"type":"disabled"},"windowsSandboxLevel":"disabled"}`},
		{"workspace write, network enabled is overridden", strings.Replace(workspace, `"restricted"`, `"enabled"`, 1)},
		{"workspace write", workspace},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := managedRun(t, l, tc.ctx, nil, env, "proxy-env")
			if res.code != 0 || res.cmd.Backend != sandbox.BackendBubblewrap || res.cmd.SandboxType != sandbox.SandboxTypeLinuxSeccomp {
				t.Fatalf("proxy-env: got exit %d backend %q type %q stderr %q, want 0 bubblewrap linuxSeccomp",
					res.code, res.cmd.Backend, res.cmd.SandboxType, res.stderr)
			}
			lines := strings.Split(strings.TrimSpace(res.stdout), "\n")
			if len(lines) != 4 {
				t.Fatalf("proxy env: got %q, want 4 lines", res.stdout)
			}
			httpProxy, _ := strings.CutPrefix(lines[0], "HTTP_PROXY=")
			local, ok := strings.CutPrefix(httpProxy, "http://127.0.0.1:")
			if !ok || local == port || local == "" {
				t.Errorf("HTTP_PROXY: got %q, want http://127.0.0.1:<bridge port other than %s>", lines[0], port)
			}
			want := []string{"HTTP_PROXY=http://127.0.0.1:" + local, "NO_PROXY=localhost,127.0.0.1",
				"YARN_HTTP_PROXY=http://example.com:8080", "https_proxy=http://127.0.0.1:" + local + "/"}
			if got := strings.Join(lines, "\n"); got != strings.Join(want, "\n") {
				t.Errorf("rewritten env: got %q, want %q", got, strings.Join(want, "\n"))
			}
			wantOut(t, "proxied GET", managedRun(t, l, tc.ctx, nil, env, "proxy-get", "http://example.invalid/marker"),
				"proxied GET http://example.invalid/marker")
			wantOut(t, "CONNECT tunnel", managedRun(t, l, tc.ctx, nil, env, "proxy-connect", "https_proxy", "example.invalid:443"),
				"HTTP/1.1 200 Connection established | tunnel:ping")
			wantOut(t, "direct connect to the host proxy port", managedRun(t, l, tc.ctx, nil, env, "dial", "127.0.0.1:"+port), "ECONNREFUSED")
			wantOut(t, "AF_UNIX socket", managedRun(t, l, tc.ctx, nil, env, "unix-socket"), "EPERM")
			wantOut(t, "AF_UNIX socket allowed", managedRun(t, l, tc.ctx,
				&sandbox.ManagedNetwork{DangerouslyAllowAllUnixSockets: true}, env, "unix-socket"), "ok")
			wantOut(t, "allowUnixSockets has no effect", managedRun(t, l, tc.ctx,
				&sandbox.ManagedNetwork{AllowUnixSockets: []string{"/tmp"}}, env, "unix-socket"), "EPERM")
			wantOut(t, "AF_VSOCK socket", managedRun(t, l, tc.ctx, nil, env, "vsock"), "EPERM")
			wantOut(t, "ptrace", managedRun(t, l, tc.ctx, nil, env, "ptrace"), "EPERM")
			res = managedRun(t, l, tc.ctx, nil, env, "status")
			if want := "CapPrm: 0000000000000000\nCapEff: 0000000000000000\nNoNewPrivs: 1\nSeccomp: 2"; strings.TrimSpace(res.stdout) != want {
				t.Errorf("status: got %q, want %q", res.stdout, want)
			}
			if left := proxyDirsLeft(t, tmp); len(left) > 0 {
				t.Errorf("socket directories left after exit: %q", left)
			}
		})
	}
}

func TestManaged_LoopbackPorts(t *testing.T) {
	l := sandbox.NewLauncher(sandboxtest.Require(t, sandbox.BackendBubblewrap), nil)
	_, port := newHostProxy(t)
	var p uint16
	fmt.Sscan(port, &p)
	tmp := t.TempDir()
	env := append(baseEnv(), "TMPDIR="+tmp, "HTTP_PROXY=http://127.0.0.1:"+port, "ALL_PROXY=socks5://localhost:"+port)
	wantOut(t, "port listed", managedRun(t, l, "", &sandbox.ManagedNetwork{LoopbackPorts: []uint16{1, p}}, env,
		"proxy-get", "http://example.invalid/listed"), "proxied GET http://example.invalid/listed")
	wantOut(t, "ALL_PROXY routed", managedRun(t, l, "", &sandbox.ManagedNetwork{LoopbackPorts: []uint16{p}}, env,
		"proxy-connect", "ALL_PROXY", "example.invalid:443"), "HTTP/1.1 200 Connection established | tunnel:ping")
	res := managedRun(t, l, "", &sandbox.ManagedNetwork{LoopbackPorts: []uint16{1}}, env, "proxy-get", "http://example.invalid/")
	wantMsg := "codex-linux-sandbox: failed to prepare host proxy routing bridge: proxy endpoint is outside the managed sandbox context"
	if res.code != 101 || strings.TrimSpace(res.stderr) != wantMsg {
		t.Errorf("port not listed: got exit %d stderr %q, want 101 %q", res.code, res.stderr, wantMsg)
	}
}

func TestManaged_FailClosed(t *testing.T) {
	l := sandbox.NewLauncher(sandboxtest.Require(t, sandbox.BackendBubblewrap), nil)
	tmp := t.TempDir()
	const prefix = "codex-linux-sandbox: failed to prepare host proxy routing bridge: "
	tests := []struct {
		name string
		env  []string
		mn   *sandbox.ManagedNetwork
		want string
	}{
		{"no proxy variables", nil, nil, "managed proxy mode requires proxy environment variables"},
		{"empty proxy variable", []string{"HTTP_PROXY="}, nil, "managed proxy mode requires proxy environment variables"},
		{"unrouted name only", []string{"FOO_PROXY=http://127.0.0.1:3128"}, nil, "managed proxy mode requires proxy environment variables"},
		{"non-loopback proxy", []string{"HTTP_PROXY=http://example.com:8080"}, nil, "managed proxy mode requires parseable loopback proxy endpoints"},
		{"unparsable proxy", []string{"https_proxy=not a url"}, nil, "managed proxy mode requires parseable loopback proxy endpoints"},
		{"ipv6 loopback is not routed", []string{"HTTP_PROXY=http://[::1]:3128"}, nil, "managed proxy mode requires parseable loopback proxy endpoints"},
		{"port zero", []string{"HTTP_PROXY=http://127.0.0.1:0"}, nil, "managed proxy mode requires parseable loopback proxy endpoints"},
		{"port outside loopbackPorts", []string{"HTTP_PROXY=http://127.0.0.1:3128", "HTTPS_PROXY=http://127.0.0.1:3129"},
			&sandbox.ManagedNetwork{LoopbackPorts: []uint16{3128}}, "proxy endpoint is outside the managed sandbox context"},
		{"default port outside loopbackPorts", []string{"HTTP_PROXY=http://localhost"},
			&sandbox.ManagedNetwork{LoopbackPorts: []uint16{8080}}, "proxy endpoint is outside the managed sandbox context"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := append(append(baseEnv(), "TMPDIR="+tmp), tt.env...)
			for _, ctx := range []string{"", managedCtx("restricted", entryJSON(specialJSON("root"), "read"))} {
				res := managedRun(t, l, ctx, tt.mn, env, "status")
				if res.code != 101 || strings.TrimSpace(res.stderr) != prefix+tt.want || res.stdout != "" {
					t.Errorf("got exit %d stdout %q stderr %q, want 101 %q", res.code, res.stdout, res.stderr, prefix+tt.want)
				}
				if d, _ := sandbox.Denied(true, res.code, nil, []byte(res.stderr), nil); !d {
					t.Errorf("got sandboxDenied false, want true")
				}
			}
			if left := proxyDirsLeft(t, tmp); len(left) > 0 {
				t.Errorf("socket directories left: %q", left)
			}
		})
	}
}

func TestManaged_SocketDirPrivate(t *testing.T) {
	l := sandbox.NewLauncher(sandboxtest.Require(t, sandbox.BackendBubblewrap), nil)
	_, port := newHostProxy(t)
	tmp := t.TempDir()
	env := append(baseEnv(), "TMPDIR="+tmp, "HTTP_PROXY=http://127.0.0.1:"+port)
	// The command lists the socket directory the launcher bound into the sandbox: it is
	// read-only there, mode 0700, and holds one socket per proxy port.
	res := runRequest(t, l, &sandbox.Request{EnforceManagedNetwork: true, Cwd: "/", Env: env,
		Argv: []string{"sh", "-c", `for d in "$TMPDIR"/codex-linux-sandbox-proxy-*; do stat -c '%a %F' "$d"; ls "$d"; touch "$d/x" 2>/dev/null || echo read-only; done`}})
	want := "700 directory\n" + port + ".sock\nread-only"
	if got := strings.TrimSpace(res.stdout); got != want || res.code != 0 {
		t.Errorf("socket dir in sandbox: got %q (exit %d, stderr %q), want %q", got, res.code, res.stderr, want)
	}
	if left := proxyDirsLeft(t, tmp); len(left) > 0 {
		t.Errorf("socket directories left: %q", left)
	}
	if _, err := os.Stat(tmp); err != nil {
		t.Fatal(err)
	}
}
