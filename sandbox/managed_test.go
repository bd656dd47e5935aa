package sandbox

import (
	"context"
	"errors"
	"io"
	"net"
	"reflect"
	"strings"
	"testing"
)

// Vectors observed from codex 0.169.0 (env inside a managed sandbox, spec/sandbox.md
// §3.10); the bridge port is written 5555.
var proxyVectors = []struct {
	in   string
	port uint16 // 0 = not a routed loopback endpoint (left untouched)
	out  string
}{
	{"http://127.0.0.1:3128", 3128, "http://127.0.0.1:5555"},
	{"http://localhost:3128/", 3128, "http://127.0.0.1:5555/"},
	{"http://LOCALHOST:3128", 3128, "http://127.0.0.1:5555"},
	{"HtTp://LocalHost:3128/a/b", 3128, "http://127.0.0.1:5555/a/b"},
	{"HTTP://127.0.0.1:3128", 3128, "http://127.0.0.1:5555"},
	{"  http://127.0.0.1:3128  ", 3128, "http://127.0.0.1:5555"},
	{"http://127.0.0.1:3128 ", 3128, "http://127.0.0.1:5555"},
	{"http://127.0.0.1:03128", 3128, "http://127.0.0.1:5555"},
	{"http://127.1:3128", 3128, "http://127.0.0.1:5555"},
	{"127.0.0.1:3128", 3128, "127.0.0.1:5555"},
	{"localhost:3128", 3128, "127.0.0.1:5555"},
	{"localhost", 80, "127.0.0.1:5555"},
	{"//127.0.0.1:3128", 3128, "127.0.0.1:5555"},
	{"http://user:pw@127.0.0.1:3128/path?q", 3128, "http://user:pw@127.0.0.1:5555/path?q"},
	{"http://user@localhost", 80, "http://user@127.0.0.1:5555"},
	{"http://a:b@c@127.0.0.1:3128", 3128, "http://a:b%40c@127.0.0.1:5555"},
	{"http://127.0.0.1:3128#frag", 3128, "http://127.0.0.1:5555/#frag"},
	{"http://127.0.0.1:3128?x=1", 3128, "http://127.0.0.1:5555/?x=1"},
	{"http://127.0.0.1:3128/%20", 3128, "http://127.0.0.1:5555/%20"},
	{"http://127.0.0.1:3128/a b/../c d", 3128, "http://127.0.0.1:5555/c%20d"},
	{`http://127.0.0.1:3128\a`, 3128, "http://127.0.0.1:5555/a"},
	{"socks5://127.0.0.1:3128/x?y#z", 3128, "socks5://127.0.0.1:5555/x?y#z"},
	{"https://127.0.0.1", 443, "https://127.0.0.1:5555"},
	{"http://localhost:80", 80, "http://127.0.0.1:5555"},
	{"http://localhost:", 80, "http://127.0.0.1:5555"},
	{"socks5://127.0.0.1:1080", 1080, "socks5://127.0.0.1:5555"},
	{"socks5://localhost", 1080, "socks5://127.0.0.1:5555"},
	{"socks5h://localhost", 1080, "socks5h://127.0.0.1:5555"},
	{"socks4://localhost", 1080, "socks4://127.0.0.1:5555"},
	{"socks4a://localhost", 1080, "socks4a://127.0.0.1:5555"},
	{"socks4://127.0.0.1:1081", 1081, "socks4://127.0.0.1:5555"},
	{"socks://localhost", 80, "socks://127.0.0.1:5555"},
	{"ws://localhost", 80, "ws://127.0.0.1:5555"},
	{"wss://localhost", 80, "wss://127.0.0.1:5555"},
	{"ftp://127.0.0.1", 80, "ftp://127.0.0.1:5555"},
	{"ftp://127.0.0.1:21", 80, "ftp://127.0.0.1:5555"},
	{"foo://127.0.0.1", 80, "foo://127.0.0.1:5555"},
	// Left untouched.
	{"http://[::1]:3128", 0, ""},
	{"http://example.com:8080", 0, ""},
	{"http://127.0.0.2:3128", 0, ""},
	{"http://localhost.:3128", 0, ""},
	{"http://127.0.0.1:0", 0, ""},
	{"socks5://localhost:0", 0, ""},
	{"http://127.0.0.1:99999", 0, ""},
	{"not a url", 0, ""},
	{"http://localhost:http://x", 0, ""},
	{"http:127.0.0.1:3128", 0, ""},
	{"unix:///tmp/x", 0, ""},
	{"", 0, ""},
	{"   ", 0, ""},
	{"http://:3128", 0, ""},
	{"file://localhost/x", 0, ""},
}

func TestParseProxyEndpoint_ReferenceVectors(t *testing.T) {
	for _, tt := range proxyVectors {
		ep, ok := parseProxyEndpoint(tt.in)
		if ok != (tt.port != 0) {
			t.Errorf("parseProxyEndpoint(%q): got ok %v, want %v", tt.in, ok, tt.port != 0)
			continue
		}
		if !ok {
			continue
		}
		if ep.port != tt.port || ep.rewrite(5555) != tt.out {
			t.Errorf("parseProxyEndpoint(%q): got port %d rewrite %q, want %d %q", tt.in, ep.port, ep.rewrite(5555), tt.port, tt.out)
		}
	}
}

func TestPlanProxyVars(t *testing.T) {
	tests := []struct {
		name     string
		env      []string
		ports    []uint16
		wantKeys []string
		wantErr  string
	}{
		{"none", []string{"PATH=/bin"}, nil, nil, msgProxyNoEnv},
		{"empty and blank values are absent", []string{"HTTP_PROXY=", "https_proxy= "}, nil, nil, msgProxyNoEnv},
		{"other names ignored", []string{"FOO_PROXY=http://127.0.0.1:1", "NO_PROXY=localhost"}, nil, nil, msgProxyNoEnv},
		{"non-loopback only", []string{"HTTP_PROXY=http://example.com:8080"}, nil, nil, msgProxyNoLoopback},
		{"unparsable only", []string{"ALL_PROXY=not a url"}, nil, nil, msgProxyNoLoopback},
		{"mixed: non-loopback left alone", []string{"HTTP_PROXY=http://127.0.0.1:3128", "HTTPS_PROXY=http://example.com:8080",
			"http_proxy=garbage"}, nil, []string{"HTTP_PROXY"}, ""},
		{"every listed name, any case", []string{"http_proxy=localhost:1", "Https_Proxy=localhost:1", "all_proxy=localhost:1",
			"ftp_proxy=localhost:1", "yarn_http_proxy=localhost:1", "YARN_HTTPS_PROXY=localhost:1", "npm_config_http_proxy=localhost:1",
			"NPM_CONFIG_HTTPS_PROXY=localhost:1", "npm_config_proxy=localhost:1", "BUNDLE_HTTP_PROXY=localhost:1",
			"BUNDLE_HTTPS_PROXY=localhost:1", "PIP_PROXY=localhost:1", "DOCKER_HTTP_PROXY=localhost:1", "DOCKER_HTTPS_PROXY=localhost:1"},
			[]uint16{1}, []string{"http_proxy", "Https_Proxy", "all_proxy", "ftp_proxy", "yarn_http_proxy", "YARN_HTTPS_PROXY",
				"npm_config_http_proxy", "NPM_CONFIG_HTTPS_PROXY", "npm_config_proxy", "BUNDLE_HTTP_PROXY", "BUNDLE_HTTPS_PROXY",
				"PIP_PROXY", "DOCKER_HTTP_PROXY", "DOCKER_HTTPS_PROXY"}, ""},
		{"listed port", []string{"HTTP_PROXY=http://127.0.0.1:3128"}, []uint16{5, 3128}, []string{"HTTP_PROXY"}, ""},
		{"one port unlisted", []string{"HTTP_PROXY=http://127.0.0.1:3128", "HTTPS_PROXY=http://127.0.0.1:3129"},
			[]uint16{3128}, nil, msgProxyOutsidePorts},
		{"default port checked", []string{"HTTP_PROXY=http://localhost"}, []uint16{80}, []string{"HTTP_PROXY"}, ""},
		{"non-loopback port not checked", []string{"HTTP_PROXY=http://127.0.0.1:3128", "HTTPS_PROXY=http://example.com:8080"},
			[]uint16{3128}, []string{"HTTP_PROXY"}, ""},
	}
	for _, tt := range tests {
		vars, err := planProxyVars(tt.env, &ManagedNetwork{LoopbackPorts: tt.ports})
		var got []string
		for _, v := range vars {
			got = append(got, v.key)
		}
		var pr *proxyRefusal
		switch {
		case tt.wantErr != "":
			if !errors.As(err, &pr) || err.Error() != tt.wantErr {
				t.Errorf("%s: got %v, want refusal %q", tt.name, err, tt.wantErr)
			}
		case err != nil || !reflect.DeepEqual(got, tt.wantKeys):
			t.Errorf("%s: got %q, %v, want %q", tt.name, got, err, tt.wantKeys)
		}
	}
}

func TestManagedStageEncodings(t *testing.T) {
	m := &ManagedNetwork{LoopbackPorts: []uint16{3128, 1}, AllowLocalBinding: true, AllowUnixSockets: []string{"/s"},
		DangerouslyAllowAllUnixSockets: true}
	got, err := decodeManagedNetwork(encodeManagedNetwork(m))
	if err != nil || !reflect.DeepEqual(got, m) {
		t.Errorf("managed network round trip: got %+v, %v, want %+v", got, err, m)
	}
	if enc := encodeManagedNetwork(&ManagedNetwork{}); enc != `{"loopbackPorts":[],"allowLocalBinding":false,"allowUnixSockets":[],"dangerouslyAllowAllUnixSockets":false}` {
		t.Errorf("default encoding: got %s", enc)
	}
	for _, bad := range []string{``, `{}`, `{"loopbackPorts":[],"allowLocalBinding":false,"allowUnixSockets":[]}`,
		`{"loopbackPorts":null,"allowLocalBinding":false,"allowUnixSockets":[],"dangerouslyAllowAllUnixSockets":false}`,
		`{"loopbackPorts":[70000],"allowLocalBinding":false,"allowUnixSockets":[],"dangerouslyAllowAllUnixSockets":false}`,
		`{"loopbackPorts":[],"allowLocalBinding":false,"allowUnixSockets":[],"dangerouslyAllowAllUnixSockets":false,"x":1}`,
		`{"loopbackPorts":[],"allowLocalBinding":false,"allowUnixSockets":[],"dangerouslyAllowAllUnixSockets":false} {}`} {
		if _, err := decodeManagedNetwork(bad); err == nil {
			t.Errorf("decodeManagedNetwork(%q): got nil error", bad)
		}
	}

	spec := &routeSpec{Routes: []proxyRoute{{EnvKey: "HTTP_PROXY", SocketPath: "/tmp/d/3128.sock"}, {EnvKey: "pip_proxy", SocketPath: "/tmp/d/3128.sock"}}}
	gotSpec, err := decodeRouteSpec(spec.encode())
	if err != nil || !reflect.DeepEqual(gotSpec, spec) {
		t.Errorf("route spec round trip: got %+v, %v", gotSpec, err)
	}
	for _, bad := range []string{``, `{"routes":[]}`, `{"routes":[{"env_key":"PATH","socket_path":"/s"}]}`,
		`{"routes":[{"env_key":"HTTP_PROXY","socket_path":"rel"}]}`, `{"routes":[{"env_key":"HTTP_PROXY","socket_path":"/a/../b"}]}`,
		`{"routes":[{"env_key":"HTTP_PROXY","socket_path":"/s"},{"env_key":"HTTP_PROXY","socket_path":"/t"}]}`,
		`{"routes":[{"env_key":"HTTP_PROXY","socket_path":"/s","x":1}]}`} {
		if _, err := decodeRouteSpec(bad); err == nil {
			t.Errorf("decodeRouteSpec(%q): got nil error", bad)
		}
	}

	a := &stageArgs{profile: "{}", haveProfile: true, inner: true, managed: m, routeSpec: spec.encode(), command: []string{"true"}}
	back, err := parseStageArgs(a.encode())
	if err != nil || !reflect.DeepEqual(back, a) {
		t.Errorf("stage args round trip: got %+v, %v, want %+v", back, err, a)
	}
}

func TestRewriteProxyEnv(t *testing.T) {
	spec := &routeSpec{Routes: []proxyRoute{{EnvKey: "HTTP_PROXY", SocketPath: "/d/1.sock"}, {EnvKey: "all_proxy", SocketPath: "/d/2.sock"}}}
	env := []string{"PATH=/bin", "HTTP_PROXY=http://u:p@localhost:1/x", "NO_PROXY=localhost", "all_proxy=socks5h://127.0.0.1:2", "HTTPS_PROXY=http://example.com:3"}
	got, err := rewriteProxyEnv(env, spec, map[string]int{"/d/1.sock": 41000, "/d/2.sock": 42000})
	want := []string{"PATH=/bin", "HTTP_PROXY=http://u:p@127.0.0.1:41000/x", "NO_PROXY=localhost", "all_proxy=socks5h://127.0.0.1:42000", "HTTPS_PROXY=http://example.com:3"}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("rewrite: got %q, %v, want %q", got, err, want)
	}
	if env[1] != "HTTP_PROXY=http://u:p@localhost:1/x" {
		t.Errorf("rewrite mutated its input: got %q", env[1])
	}
	for _, bad := range [][]string{{"PATH=/bin"}, {"HTTP_PROXY=http://example.com:1", "all_proxy=socks5h://127.0.0.1:2"}} {
		if _, err := rewriteProxyEnv(bad, spec, nil); err == nil {
			t.Errorf("rewrite of %q: got nil error", bad)
		}
	}
}

// TestBridge_ForwardsAndCloses: bytes pass both ways with half-close, and close cuts
// an idle forwarded connection and returns with every goroutine gone (goleak gate).
func TestBridge_ForwardsAndCloses(t *testing.T) {
	upstream, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer upstream.Close()
	served := make(chan struct{})
	go func() { // echo server: uppercases one request, then half-closes
		defer close(served)
		for i := 0; i < 2; i++ {
			c, err := upstream.Accept()
			if err != nil {
				return
			}
			b, _ := io.ReadAll(c)
			c.Write([]byte(strings.ToUpper(string(b))))
			c.(*net.TCPConn).CloseWrite()
			if i == 1 {
				io.Copy(io.Discard, c) // the idle one: held open until the bridge closes
			}
			c.Close()
		}
	}()
	front, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	b := newBridge()
	b.serve(front, func(ctx context.Context) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "tcp", upstream.Addr().String())
	})
	c, err := net.Dial("tcp", front.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	c.Write([]byte("hello"))
	c.(*net.TCPConn).CloseWrite()
	got, _ := io.ReadAll(c)
	c.Close()
	if string(got) != "HELLO" {
		t.Errorf("forwarded reply: got %q, want %q", got, "HELLO")
	}
	idle, err := net.Dial("tcp", front.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer idle.Close()
	idle.Write([]byte("x"))
	idle.(*net.TCPConn).CloseWrite()
	buf := make([]byte, 1)
	if _, err := io.ReadFull(idle, buf); err != nil || buf[0] != 'X' {
		t.Fatalf("idle connection reply: got %q, %v", buf, err)
	}
	b.close()
	b.close() // idempotent
	upstream.Close()
	<-served
	if _, err := net.Dial("tcp", front.Addr().String()); err == nil {
		t.Errorf("dial after close: got connected, want refused")
	}
}

func FuzzParseProxyEndpoint(f *testing.F) {
	for _, v := range proxyVectors {
		f.Add(v.in)
	}
	f.Fuzz(func(t *testing.T, v string) {
		ep, ok := parseProxyEndpoint(v)
		if !ok {
			return
		}
		if ep.port == 0 {
			t.Fatalf("%q: routed endpoint with port 0", v)
		}
		out := ep.rewrite(5555)
		if !strings.Contains(out, "127.0.0.1:5555") {
			t.Fatalf("%q: rewrite %q lacks the bridge address", v, out)
		}
		// Rewriting is stable: the rewritten value is a loopback endpoint on the bridge
		// port that rewrites to itself.
		again, ok := parseProxyEndpoint(out)
		if !ok || again.port != 5555 || again.rewrite(5555) != out {
			t.Fatalf("%q: rewrite %q is not a fixed point (ok %v, port %d, %q)", v, out, ok, again.port, again.rewrite(5555))
		}
	})
}

func FuzzDecodeRouteSpec(f *testing.F) {
	f.Add(`{"routes":[{"env_key":"HTTP_PROXY","socket_path":"/tmp/d/3128.sock"}]}`)
	f.Add(`{"routes":[]}`)
	f.Add(`{"routes":[{"env_key":"pip_proxy","socket_path":"/a/../b"}]}`)
	f.Fuzz(func(t *testing.T, s string) {
		spec, err := decodeRouteSpec(s)
		if err != nil {
			return
		}
		again, err := decodeRouteSpec(spec.encode())
		if err != nil || !reflect.DeepEqual(again, spec) {
			t.Fatalf("%q: re-encoding does not round-trip: %+v, %v", s, again, err)
		}
	})
}

func FuzzDecodeManagedNetwork(f *testing.F) {
	f.Add(encodeManagedNetwork(&ManagedNetwork{}))
	f.Add(encodeManagedNetwork(&ManagedNetwork{LoopbackPorts: []uint16{1, 65535}, AllowUnixSockets: []string{"/x"}, DangerouslyAllowAllUnixSockets: true}))
	f.Add(`{"loopbackPorts":[70000]}`)
	f.Fuzz(func(t *testing.T, s string) {
		m, err := decodeManagedNetwork(s)
		if err != nil {
			return
		}
		again, err := decodeManagedNetwork(encodeManagedNetwork(m))
		if err != nil || !reflect.DeepEqual(again.LoopbackPorts, nonNil(m.LoopbackPorts)) ||
			again.DangerouslyAllowAllUnixSockets != m.DangerouslyAllowAllUnixSockets {
			t.Fatalf("%q: re-encoding does not round-trip: %+v, %v", s, again, err)
		}
	})
}

func nonNil(p []uint16) []uint16 {
	if p == nil {
		return []uint16{}
	}
	return p
}
