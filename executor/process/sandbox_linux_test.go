package process_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/execlab/executor/executor/process"
	"github.com/execlab/executor/executor/protocol"
	"github.com/execlab/executor/jsonwire"
	"github.com/execlab/executor/sandbox"
	"github.com/execlab/executor/sandbox/policy"
	"github.com/execlab/executor/sandbox/sandboxtest"
)

// rootProfile is a managed profile whose only file-system entry is the root with access
// (read or write), with network (restricted or enabled).
func rootProfile(t *testing.T, network, access string) *policy.Context {
	return sandboxtest.Context(t, `{"permissions":{"type":"managed","network":"`+network+`","file_system":{"type":"restricted","entries":[
		{"path":{"type":"special","value":{"kind":"root"}},"access":"`+access+`"}]}},"windowsSandboxLevel":"disabled"}`)
}

// readOnly is the read-only profile: the root readable, the network restricted.
func readOnly(t *testing.T) *policy.Context { return rootProfile(t, "restricted", "read") }

func sandboxedManager(t *testing.T, l *sandbox.Launcher) (*process.Manager, *chanNotifier) {
	t.Helper()
	m := newManager(t, &process.Options{Sandbox: l})
	n := newNotifier(256)
	m.Attach(n)
	return m, n
}

// runToExit starts p and returns the start result, the output and the exited event
// plus the final process/read result.
func runToExit(t *testing.T, m *process.Manager, n *chanNotifier, p *protocol.ProcessStartParams) (*protocol.ProcessStartResult, string, event, *protocol.ProcessReadResult) {
	t.Helper()
	res, err := m.Start(context.Background(), p)
	if err != nil {
		t.Fatalf("Start(%q): %v", p.Argv, err)
	}
	var out strings.Builder
	var exited event
	for _, ev := range n.untilClosed(t, p.ProcessID) {
		switch ev.method {
		case protocol.MethodProcessOutput:
			out.Write(ev.chunk)
		case protocol.MethodProcessExited:
			exited = ev
		}
	}
	rd, err := m.Read(context.Background(), &protocol.ProcessReadParams{ProcessID: p.ProcessID})
	if err != nil {
		t.Fatalf("Read: %v", err)
	}
	return res, out.String(), exited, rd
}

func TestStart_Sandboxed_Bubblewrap(t *testing.T) {
	l := sandboxtest.Launcher(t, sandbox.BackendBubblewrap)
	ws := t.TempDir()
	tests := []struct {
		name       string
		ctx        *policy.Context
		argv       []string
		arg0       *string
		tty        bool
		wantCode   int32
		wantDenied bool
		wantOut    string // substring
	}{
		{"true", sandboxtest.WorkspaceWrite(t, ws), []string{"/bin/true"}, nil, false, 0, false, ""},
		{"write inside workspace", sandboxtest.WorkspaceWrite(t, ws), []string{"sh", "-c", "echo hi > f && cat f"}, nil, false, 0, false, "hi"},
		{"write outside workspace is denied", sandboxtest.WorkspaceWrite(t, ws), []string{"sh", "-c", "echo x > /etc/executor-sandbox-test"}, nil, false, 2, true, "Read-only file system"},
		{"silent failure is not a denial", sandboxtest.WorkspaceWrite(t, ws), []string{"sh", "-c", "exit 1"}, nil, false, 1, false, ""},
		{"keyword with exit 0 is not a denial", sandboxtest.WorkspaceWrite(t, ws), []string{"sh", "-c", "echo Permission denied"}, nil, false, 0, false, "Permission denied"},
		{"exit 127 not found", sandboxtest.WorkspaceWrite(t, ws), []string{"sh", "-c", "no-such-command-xyz"}, nil, false, 127, false, "not found"},
		{"SIGSYS is a denial", sandboxtest.WorkspaceWrite(t, ws), []string{"sh", "-c", "kill -SYS $$"}, nil, false, 159, true, ""},
		{"SIGKILL is not", sandboxtest.WorkspaceWrite(t, ws), []string{"sh", "-c", "kill -9 $$"}, nil, false, 137, false, ""},
		{"network is restricted", readOnly(t), []string{"sh", "-c", "echo > /dev/tcp/127.0.0.1/9"}, nil, false, 1, true, ""},
		{"arg0 preserved", sandboxtest.WorkspaceWrite(t, ws), []string{"sh", "-c", "echo $0"}, str("custom-arg0"), false, 0, false, "custom-arg0"},
		{"pty", sandboxtest.WorkspaceWrite(t, ws), []string{"sh", "-c", "test -t 0 && echo tty"}, nil, true, 0, false, "tty"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, n := sandboxedManager(t, l)
			p := startParams("p", protocol.FromNative(ws), tt.argv...)
			p.ProcessID = "p" + string(rune('a'+i))
			p.Env["HOME"] = ws
			p.Arg0, p.Tty, p.Sandbox = tt.arg0, tt.tty, tt.ctx
			if tt.name == "network is restricted" {
				p.Argv = []string{"bash", "-c", "echo > /dev/tcp/127.0.0.1/9"}
			}
			res, out, exited, rd := runToExit(t, m, n, p)
			if res.SandboxType != protocol.SandboxTypeLinuxSeccomp {
				t.Errorf("got sandboxType %q, want linuxSeccomp", res.SandboxType)
			}
			if exited.code != tt.wantCode || exited.denied != tt.wantDenied {
				t.Errorf("got exit %d sandboxDenied %v (output %q), want %d %v", exited.code, exited.denied, out, tt.wantCode, tt.wantDenied)
			}
			if rd.SandboxDenied != tt.wantDenied {
				t.Errorf("got process/read sandboxDenied %v, want %v", rd.SandboxDenied, tt.wantDenied)
			}
			if !strings.Contains(out, tt.wantOut) {
				t.Errorf("got output %q, want it to contain %q", out, tt.wantOut)
			}
		})
	}
	if _, err := os.Stat("/etc/executor-sandbox-test"); err == nil {
		t.Fatal("a sandboxed command wrote /etc/executor-sandbox-test")
	}
}

// An unsandboxed failure with a keyword is never a denial, and sandboxType is none.
func TestStart_Unsandboxed_NeverDenied(t *testing.T) {
	m, n := sandboxedManager(t, sandboxtest.Launcher(t, sandbox.BackendBubblewrap))
	p := startParams("u", tmpURI(t), "sh", "-c", "echo 'Permission denied' >&2; exit 1")
	res, _, exited, rd := runToExit(t, m, n, p)
	if res.SandboxType != protocol.SandboxTypeNone || exited.code != 1 || exited.denied || rd.SandboxDenied {
		t.Fatalf("got sandboxType %q exit %d denied %v/%v, want none 1 false/false", res.SandboxType, exited.code, exited.denied, rd.SandboxDenied)
	}
}

// A disabled profile is still wrapped (sandboxType linuxSeccomp, spec/sandbox.md §2.9)
// and runs with full access.
func TestStart_Sandboxed_DisabledProfileIsWrapped(t *testing.T) {
	m, n := sandboxedManager(t, sandboxtest.Launcher(t, sandbox.BackendBubblewrap))
	ws := t.TempDir()
	p := startParams("d", protocol.FromNative(ws), "sh", "-c", "echo ok > f && cat f")
	p.Sandbox = sandboxtest.Context(t, `{"permissions":{"type":"disabled"},"windowsSandboxLevel":"disabled"}`)
	res, out, exited, _ := runToExit(t, m, n, p)
	if res.SandboxType != protocol.SandboxTypeLinuxSeccomp || exited.code != 0 || out != "ok\n" {
		t.Fatalf("got sandboxType %q exit %d output %q, want linuxSeccomp 0 \"ok\\n\"", res.SandboxType, exited.code, out)
	}
}

func TestStart_Sandboxed_PreparationErrors(t *testing.T) {
	m, _ := sandboxedManager(t, sandboxtest.Launcher(t, sandbox.BackendBubblewrap))
	ws := tmpURI(t)
	tests := []struct {
		name string
		edit func(p *protocol.ProcessStartParams)
		code int
		msg  string
	}{
		// managedNetwork texts observed from codex 0.169.0; checked with or without intent.
		{"managedNetwork not an object", func(p *protocol.ProcessStartParams) {
			p.ManagedNetwork = json.RawMessage(`"x"`)
		}, -32602, `invalid type: string "x", expected struct ManagedNetworkSandboxContext`},
		{"loopbackPorts out of range", func(p *protocol.ProcessStartParams) {
			p.EnforceManagedNetwork, p.ManagedNetwork = true, json.RawMessage(`{"loopbackPorts":[70000]}`)
		}, -32602, "invalid number"},
		{"loopbackPorts null", func(p *protocol.ProcessStartParams) {
			p.Sandbox, p.ManagedNetwork = nil, json.RawMessage(`{"loopbackPorts":null}`)
		}, -32602, "invalid type: null, expected a sequence"},
		{"allowLocalBinding string", func(p *protocol.ProcessStartParams) {
			p.ManagedNetwork = json.RawMessage(`{"allowLocalBinding":"yes"}`)
		}, -32602, `invalid type: string "yes", expected a boolean`},
		{"allowUnixSockets number", func(p *protocol.ProcessStartParams) {
			p.ManagedNetwork = json.RawMessage(`{"allowUnixSockets":[1]}`)
		}, -32602, "invalid type: number, expected a string"},
		{"dangerouslyAllowAllUnixSockets null", func(p *protocol.ProcessStartParams) {
			p.ManagedNetwork = json.RawMessage(`{"dangerouslyAllowAllUnixSockets":null}`)
		}, -32602, "invalid type: null, expected a boolean"},
		{"managedNetwork decoding beats our networkProxy and shellSnapshot refusals", func(p *protocol.ProcessStartParams) {
			p.ManagedNetwork = json.RawMessage(`{"allowLocalBinding":1}`)
			p.NetworkProxy = json.RawMessage(`{"proxy":{}}`)
			p.ShellSnapshot = json.RawMessage(`{}`)
		}, -32602, "invalid type: number, expected a boolean"},
		{"foreign permission path", func(p *protocol.ProcessStartParams) {
			p.Sandbox = sandboxtest.Context(t, `{"permissions":{"type":"managed","network":"restricted","file_system":{"type":"restricted","entries":[
				{"path":{"type":"path","path":"file://server/share"},"access":"read"}]}},"windowsSandboxLevel":"disabled"}`)
		}, -32602, "failed to prepare process sandbox: invalid sandbox permission path: 'file://server/share' is invalid on 'linux'"},
		{"sandbox error beats bad cwd", func(p *protocol.ProcessStartParams) {
			p.Sandbox = sandboxtest.Context(t, `{"permissions":{"type":"disabled"},"windowsSandboxLevel":"mxc"}`)
			p.Cwd = "file://server/share/x"
		}, -32602, "native MXC is unavailable on this executor"},
		{"missing cwd is a spawn failure", func(p *protocol.ProcessStartParams) {
			p.Cwd = ws + "/missing"
		}, -32603, "No such file or directory (os error 2)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := startParams("e", ws, "true")
			p.Sandbox = readOnly(t)
			tt.edit(p)
			_, err := m.Start(context.Background(), p)
			wantRPCError(t, err, tt.code, tt.msg)
		})
	}
}

// Managed network end to end (spec/sandbox.md §3.10): the proxy variables point at
// the in-sandbox bridge, a request through it reaches the host proxy, and the
// fail-closed rows exit 101 with sandboxDenied.
func TestStart_Sandboxed_ManagedNetwork(t *testing.T) {
	m, n := sandboxedManager(t, sandboxtest.Launcher(t, sandbox.BackendBubblewrap))
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "via-proxy %s %s\n", r.Method, r.URL)
	}))
	defer proxy.Close()
	_, port, _ := net.SplitHostPort(proxy.Listener.Addr().String())
	ws := t.TempDir()
	// bash /dev/tcp to the rewritten port: a plain proxied GET, answered by the host proxy.
	script := `p=${HTTP_PROXY##*:}; echo "$HTTP_PROXY" | sed 's/:[0-9]*$/:PORT/'; echo "$NO_PROXY"; ` +
		`[ "$p" != "` + port + `" ] && echo bridged; exec 3<>/dev/tcp/127.0.0.1/$p; ` +
		`printf 'GET http://example.invalid/x HTTP/1.0\r\n\r\n' >&3; tail -n 1 <&3`
	tests := []struct {
		name       string
		sandbox    *policy.Context
		env        map[string]string
		managed    string
		argv       []string
		wantCode   int32
		wantDenied bool
		wantOut    string
	}{
		{"proxied request, workspace write", sandboxtest.WorkspaceWrite(t, ws), map[string]string{"HTTP_PROXY": "http://localhost:" + port, "NO_PROXY": "localhost"},
			`{"loopbackPorts":[` + port + `]}`, []string{"bash", "-c", script}, 0, false,
			"http://127.0.0.1:PORT\nlocalhost\nbridged\nvia-proxy GET http://example.invalid/x\n"},
		{"proxied request, no sandbox field", nil, map[string]string{"HTTP_PROXY": "http://127.0.0.1:" + port, "NO_PROXY": "localhost"},
			"", []string{"bash", "-c", script}, 0, false,
			"http://127.0.0.1:PORT\nlocalhost\nbridged\nvia-proxy GET http://example.invalid/x\n"},
		{"no proxy env", readOnly(t), nil, "", []string{"true"}, 101, true,
			"codex-linux-sandbox: failed to prepare host proxy routing bridge: managed proxy mode requires proxy environment variables\n"},
		{"non-loopback proxy", readOnly(t), map[string]string{"HTTPS_PROXY": "http://example.com:8080"}, "", []string{"true"}, 101, true,
			"codex-linux-sandbox: failed to prepare host proxy routing bridge: managed proxy mode requires parseable loopback proxy endpoints\n"},
		{"port outside loopbackPorts", readOnly(t), map[string]string{"HTTP_PROXY": "http://127.0.0.1:" + port}, `{"loopbackPorts":[1]}`,
			[]string{"true"}, 101, true,
			"codex-linux-sandbox: failed to prepare host proxy routing bridge: proxy endpoint is outside the managed sandbox context\n"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := startParams("m"+string(rune('a'+i)), protocol.FromNative(ws), tt.argv...)
			p.Env["HOME"], p.Env["TMPDIR"] = ws, ws
			for k, v := range tt.env {
				p.Env[k] = v
			}
			p.Sandbox, p.EnforceManagedNetwork = tt.sandbox, true
			if tt.managed != "" {
				p.ManagedNetwork = json.RawMessage(tt.managed)
			}
			res, out, exited, _ := runToExit(t, m, n, p)
			if res.SandboxType != protocol.SandboxTypeLinuxSeccomp || exited.code != tt.wantCode || exited.denied != tt.wantDenied || out != tt.wantOut {
				t.Errorf("got sandboxType %q exit %d denied %v output %q, want linuxSeccomp %d %v %q",
					res.SandboxType, exited.code, exited.denied, out, tt.wantCode, tt.wantDenied, tt.wantOut)
			}
		})
	}
	if left, _ := filepath.Glob(filepath.Join(ws, "codex-linux-sandbox-proxy-*")); len(left) > 0 {
		t.Errorf("proxy socket directories left: %q", left)
	}
}

// Degraded backend (spec/sandbox.md §3.11): read-only plans run, workspace-write is
// refused before anything is spawned.
func TestStart_Sandboxed_DegradedLandlock(t *testing.T) {
	l := sandboxtest.Launcher(t, sandbox.BackendLandlock)
	m, n := sandboxedManager(t, l)
	ws := t.TempDir()
	marker := filepath.Join(ws, "spawned")

	p := startParams("ww", protocol.FromNative(ws), "touch", marker)
	p.Sandbox = sandboxtest.WorkspaceWrite(t, ws)
	_, err := m.Start(context.Background(), p)
	var re *jsonwire.Error
	if !errors.As(err, &re) || re.Code != -32602 ||
		!strings.HasPrefix(re.Message, "sandbox intent cannot be enforced on this executor: degraded Landlock backend cannot express") {
		t.Fatalf("got error %v, want -32602 with the degraded-backend refusal", err)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("refused command was spawned")
	}

	p = startParams("mn", protocol.FromNative(ws), "touch", marker)
	p.Sandbox, p.EnforceManagedNetwork = readOnly(t), true
	p.Env["HTTP_PROXY"] = "http://127.0.0.1:3128"
	_, err = m.Start(context.Background(), p)
	wantRPCError(t, err, -32602, "sandbox intent cannot be enforced on this executor: degraded Landlock backend cannot express managed network")

	p = startParams("ro", protocol.FromNative(ws), "sh", "-c", "cat /etc/hostname >/dev/null && echo read-ok; echo x > "+marker)
	p.Sandbox = readOnly(t)
	res, out, exited, _ := runToExit(t, m, n, p)
	if res.SandboxType != protocol.SandboxTypeLinuxSeccomp || !strings.Contains(out, "read-ok") || exited.code == 0 || !exited.denied {
		t.Fatalf("got sandboxType %q output %q exit %d denied %v, want linuxSeccomp, read-ok, a failed write flagged as denied", res.SandboxType, out, exited.code, exited.denied)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("read-only sandbox wrote a file")
	}
}

// Transparent TCP end to end (spec/network-proxy.md §8.3): a direct connection by name
// from the sandbox reaches the loopback server through the process's own SOCKS5
// policy; proxy.transparentTcp needs no enforceManagedNetwork (it implies the managed
// network, as in codex 0.171.0); Options.TransparentTCP (--linux-sandbox-transparent-tcp)
// gives it to every enforceManagedNetwork start, and fails closed without SOCKS5 or
// without an executor-local proxy.
func TestStart_Sandboxed_TransparentTCP(t *testing.T) {
	l := sandboxtest.Launcher(t, sandbox.BackendBubblewrap)
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "direct-by-name %s\n", r.Host)
	}))
	defer site.Close()
	_, port, _ := net.SplitHostPort(site.Listener.Addr().String())
	ws := t.TempDir()
	// bash /dev/tcp ignores the proxy variables: only the capture can carry it.
	script := `exec 2>/dev/null; exec 3<>/dev/tcp/localhost./` + port + ` && printf 'GET / HTTP/1.0\r\nHost: localhost.\r\n\r\n' >&3 && tail -n 1 <&3`
	const allowLocalhost = `,"domains":{"localhost":"allow"}`
	noSOCKS5 := json.RawMessage(`{"proxy":{"enabled":true,"enableSocks5":false,"enableSocks5Udp":false,"allowUpstreamProxy":false,` +
		`"dangerouslyAllowAllUnixSockets":false,"mode":"full","allowLocalBinding":false}}`)
	tests := []struct {
		name     string
		forced   bool // process.Options.TransparentTCP
		proxy    json.RawMessage
		enforce  bool
		env      map[string]string
		wantCode int32
		wantOut  string
	}{
		{"proxy.transparentTcp without enforceManagedNetwork", false, proxyConfig(`,"transparentTcp":true` + allowLocalhost), false, nil,
			0, "direct-by-name localhost.\n"},
		{"forced by the server flag", true, proxyConfig(allowLocalhost), true, nil, 0, "direct-by-name localhost.\n"},
		{"not forced, not asked: no capture", false, proxyConfig(allowLocalhost), true, nil, 1, ""},
		{"forced without SOCKS5", true, noSOCKS5, true, nil, 101,
			"codex-linux-sandbox: failed to prepare transparent TCP: transparent TCP requires managed SOCKS5\n"},
		{"forced without an executor-local proxy", true, nil, true, map[string]string{"ALL_PROXY": "socks5h://127.0.0.1:1080"}, 101,
			"codex-linux-sandbox: failed to prepare host proxy routing bridge: proxy endpoint is outside the managed sandbox context\n"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := newManager(t, &process.Options{Sandbox: l, TransparentTCP: tt.forced})
			n := newNotifier(256)
			m.Attach(n)
			p := startParams("t"+string(rune('a'+i)), protocol.FromNative(ws), "bash", "-c", script)
			p.Env["HOME"], p.Env["TMPDIR"] = ws, ws
			for k, v := range tt.env {
				p.Env[k] = v
			}
			p.Sandbox, p.EnforceManagedNetwork, p.NetworkProxy = readOnly(t), tt.enforce, tt.proxy
			res, out, exited, _ := runToExit(t, m, n, p)
			if res.SandboxType != protocol.SandboxTypeLinuxSeccomp || exited.code != tt.wantCode || out != tt.wantOut {
				t.Errorf("got sandboxType %q exit %d output %q, want linuxSeccomp %d %q",
					res.SandboxType, exited.code, out, tt.wantCode, tt.wantOut)
			}
		})
	}
}
