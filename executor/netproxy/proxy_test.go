package netproxy_test

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/execlab/executor/executor/netproxy"
)

// upstream is a loopback origin server that echoes the method, the request URI and the
// headers it received.
func upstream(t *testing.T) (*httptest.Server, string) {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		fmt.Fprintf(w, "%s %s body=%q x-test=%q via=%q proxy-auth=%q", r.Method, r.RequestURI, body, r.Header.Get("X-Test"), r.Header.Get("Via"), r.Header.Get("Proxy-Authorization"))
	}))
	t.Cleanup(srv.Close)
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	return srv, port
}

// auditLog collects audit records.
type auditLog struct {
	mu   sync.Mutex
	recs []netproxy.AuditRecord
}

func (a *auditLog) add(r netproxy.AuditRecord) {
	a.mu.Lock()
	a.recs = append(a.recs, r)
	a.mu.Unlock()
}

func (a *auditLog) reasons() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []string
	for _, r := range a.recs {
		out = append(out, string(r.Request.Protocol)+":"+string(r.Decision.Reason))
	}
	return out
}

func startProxy(t *testing.T, mode string, extra string) (*netproxy.Proxy, *auditLog) {
	t.Helper()
	p := policy(t, mode, false, extra)
	log := &auditLog{}
	px, err := netproxy.Start(p, &netproxy.Options{Audit: log.add})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(px.Close)
	return px, log
}

func proxiedClient(px *netproxy.Proxy) *http.Client {
	u, _ := url.Parse("http://" + px.HTTPAddr())
	return &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(u), DisableKeepAlives: true}, Timeout: 10 * time.Second}
}

func TestProxy_HTTPForwardingAndBlocks(t *testing.T) {
	_, port := upstream(t)
	px, log := startProxy(t, "full", `"domains":{"localhost":"allow","denied.localhost":"deny","**.localhost":"allow"}`)
	c := proxiedClient(px)

	req, _ := http.NewRequest("POST", "http://localhost:"+port+"/path?q=1", strings.NewReader("payload"))
	req.Header.Set("X-Test", "kept")
	res, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if want := `POST /path?q=1 body="payload" x-test="kept" via="" proxy-auth=""`; res.StatusCode != 200 || string(body) != want {
		t.Errorf("allowed: got %d %q, want 200 %q", res.StatusCode, body, want)
	}

	tests := []struct {
		url, header, body string
	}{
		{"http://denied.localhost:" + port + "/", "blocked-by-denylist",
			`{"status":"blocked","host":"denied.localhost","reason":"denied","decision":"deny","source":"baseline_policy","protocol":"http","port":` + port + `,"message":"Domain denied by the sandbox policy."}`},
		{"http://127.0.0.1:" + port + "/", "blocked-by-allowlist",
			`{"status":"blocked","host":"127.0.0.1","reason":"not_allowed_local","decision":"deny","source":"baseline_policy","protocol":"http","port":` + port + `,"message":"Sandbox policy blocks local/private network addresses."}`},
		{"http://other.test:" + port + "/", "blocked-by-allowlist",
			`{"status":"blocked","host":"other.test","reason":"not_allowed","decision":"deny","source":"baseline_policy","protocol":"http","port":` + port + `,"message":"Domain not in allowlist."}`},
	}
	for _, tt := range tests {
		res, err := c.Get(tt.url)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != 403 || res.Header.Get("X-Proxy-Error") != tt.header || res.Header.Get("Content-Type") != "application/json" || string(body) != tt.body {
			t.Errorf("%s: got %d %q %q, want 403 %q %q", tt.url, res.StatusCode, res.Header.Get("X-Proxy-Error"), body, tt.header, tt.body)
		}
	}
	want := []string{"http:allow", "http:denied", "http:not_allowed_local", "http:not_allowed"}
	if got := log.reasons(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("audit: got %v, want %v", got, want)
	}
}

func TestProxy_LimitedMode(t *testing.T) {
	_, port := upstream(t)
	px, _ := startProxy(t, "limited", `"domains":{"localhost":"allow"}`)
	c := proxiedClient(px)
	res, err := c.Head("http://localhost:" + port + "/")
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("HEAD: %v %v", res, err)
	}
	res.Body.Close()
	res, err = c.Post("http://localhost:"+port+"/", "text/plain", strings.NewReader("x"))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	want := `{"status":"blocked","host":"localhost","reason":"method_not_allowed","decision":"deny","source":"mode_guard","protocol":"http","port":` + port + `,"message":"Method not allowed in limited mode."}`
	if res.StatusCode != 403 || res.Header.Get("X-Proxy-Error") != "blocked-by-method-policy" || string(body) != want {
		t.Errorf("POST: got %d %q %q", res.StatusCode, res.Header.Get("X-Proxy-Error"), body)
	}
	head, text := rawRequest(t, px.HTTPAddr(), "CONNECT localhost:"+port+" HTTP/1.1\r\nHost: localhost:"+port+"\r\n\r\n")
	if !strings.HasPrefix(head, "HTTP/1.1 403 Forbidden\r\ncontent-type: text/plain\r\nx-proxy-error: blocked-by-mitm-required\r\n") || text != "MITM required for limited HTTPS." {
		t.Errorf("CONNECT: got %q %q", head, text)
	}
	if rep := socksConnect(t, px.SOCKSAddr(), "localhost", port); rep != 2 {
		t.Errorf("SOCKS5 in limited mode: reply %d, want 2", rep)
	}
}

// dialDeadline connects to addr with every read and write bounded by 10 s in all, so a
// proxy that stops answering fails the test instead of hanging it.
func dialDeadline(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	return c
}

// rawRequest sends req on a fresh connection and returns the response head and body
// (read to EOF).
func rawRequest(t *testing.T, addr, req string) (head, body string) {
	t.Helper()
	c := dialDeadline(t, addr)
	defer c.Close()
	if _, err := io.WriteString(c, req); err != nil {
		t.Fatal(err)
	}
	all, _ := io.ReadAll(c)
	h, b, _ := strings.Cut(string(all), "\r\n\r\n")
	return h + "\r\n", b
}

func TestProxy_BadRequests(t *testing.T) {
	_, port := upstream(t)
	px, _ := startProxy(t, "full", `"domains":{"localhost":"allow"}`)
	tests := []struct{ req, status, body string }{
		{"garbage\r\n\r\n", "HTTP/1.1 400 Bad Request\r\nconnection: close\r\ncontent-length: 0\r\n", ""},
		{"GET / HTTP/1.1\r\n\r\n", "HTTP/1.1 400 Bad Request\r\ncontent-type: text/plain\r\ncontent-length: 12\r\n", "missing host"},
		{"GET http://localhost:1/ HTTP/1.1\r\nHost: other:1\r\n\r\n", "HTTP/1.1 400 Bad Request\r\ncontent-type: text/plain\r\ncontent-length: 41\r\n", "Host header does not match request target"},
		// Our own refusals (smuggling guards; the reference was not probed on these):
		{"GET http://localhost:" + port + "/ HTTP/1.1\r\nHost: localhost:" + port + "\r\nX: a\rGET /x HTTP/1.1\r\n\r\n", "HTTP/1.1 400 Bad Request\r\nconnection: close\r\ncontent-length: 0\r\n", ""},
		{"POST http://localhost:" + port + "/ HTTP/1.1\r\nHost: localhost:" + port + "\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", "HTTP/1.1 400 Bad Request\r\nconnection: close\r\ncontent-length: 0\r\n", ""},
	}
	for _, tt := range tests {
		head, body := rawRequest(t, px.HTTPAddr(), tt.req)
		if !strings.HasPrefix(head, tt.status) || !strings.Contains(head, "\r\ndate: ") || body != tt.body {
			t.Errorf("%q: got %q %q, want %q… %q", tt.req, head, body, tt.status, tt.body)
		}
	}
}

func TestProxy_UpstreamFailure(t *testing.T) {
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(l.Addr().String())
	l.Close() // nothing listens there now
	px, _ := startProxy(t, "full", `"domains":{"localhost":"allow"}`)
	head, body := rawRequest(t, px.HTTPAddr(), "GET http://localhost:"+port+"/ HTTP/1.1\r\nHost: localhost:"+port+"\r\n\r\n")
	if !strings.HasPrefix(head, "HTTP/1.1 502 Bad Gateway\r\ncontent-type: text/plain\r\n") || body != "upstream failure" {
		t.Errorf("got %q %q", head, body)
	}
	if rep := socksConnect(t, px.SOCKSAddr(), "localhost", port); rep != 5 {
		t.Errorf("SOCKS5 to a closed port: reply %d, want 5", rep)
	}
}

func TestProxy_ConnectTunnel(t *testing.T) {
	_, port := upstream(t)
	px, log := startProxy(t, "full", `"domains":{"localhost":"allow"}`)
	c := dialDeadline(t, px.HTTPAddr())
	defer c.Close()
	fmt.Fprintf(c, "CONNECT localhost:%s HTTP/1.1\r\nHost: localhost:%s\r\n\r\n", port, port)
	br := bufio.NewReader(c)
	status, _ := br.ReadString('\n')
	date, _ := br.ReadString('\n')
	blank, _ := br.ReadString('\n')
	if status != "HTTP/1.1 200 OK\r\n" || !strings.HasPrefix(date, "date: ") || blank != "\r\n" {
		t.Fatalf("CONNECT reply %q %q %q", status, date, blank)
	}
	fmt.Fprintf(c, "GET /tunnel HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
	res, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	if !strings.HasPrefix(string(body), "GET /tunnel ") {
		t.Errorf("through the tunnel: %q", body)
	}
	if got := log.reasons(); fmt.Sprint(got) != "[https_connect:allow]" {
		t.Errorf("audit %v", got)
	}
}

// socksConnect runs a SOCKS5 CONNECT to host:port (a name) and returns the reply code;
// on success it sends a GET through the tunnel and checks the answer.
func socksConnect(t *testing.T, addr, host, port string) byte {
	t.Helper()
	c := dialDeadline(t, addr)
	defer c.Close()
	c.Write([]byte{5, 1, 0})
	var sel [2]byte
	if _, err := io.ReadFull(c, sel[:]); err != nil || sel != [2]byte{5, 0} {
		t.Fatalf("method selection %v %v", sel, err)
	}
	var p uint16
	fmt.Sscan(port, &p)
	req := append([]byte{5, 1, 0, 3, byte(len(host))}, host...)
	req = binary.BigEndian.AppendUint16(req, p)
	c.Write(req)
	var rep [10]byte
	if _, err := io.ReadFull(c, rep[:]); err != nil {
		t.Fatalf("reading the reply: %v", err)
	}
	if rep[1] == 0 {
		fmt.Fprintf(c, "GET /socks HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
		all, _ := io.ReadAll(c)
		if !strings.Contains(string(all), "GET /socks ") {
			t.Errorf("through SOCKS5: %q", all)
		}
	}
	return rep[1]
}

func TestProxy_SOCKS5(t *testing.T) {
	_, port := upstream(t)
	px, log := startProxy(t, "full", `"domains":{"localhost":"allow","denied.localhost":"deny"}`)
	if px.SOCKSAddr() == "" || px.SOCKSAddr() == px.HTTPAddr() {
		t.Fatalf("SOCKS5 address %q", px.SOCKSAddr())
	}
	for _, tt := range []struct {
		host string
		rep  byte
	}{{"localhost", 0}, {"denied.localhost", 2}, {"other.test", 2}, {"127.0.0.1", 2}} {
		if rep := socksConnect(t, px.SOCKSAddr(), tt.host, port); rep != tt.rep {
			t.Errorf("%s: reply %d, want %d", tt.host, rep, tt.rep)
		}
	}
	want := "[socks5_tcp:allow socks5_tcp:denied socks5_tcp:not_allowed socks5_tcp:not_allowed_local]"
	if got := log.reasons(); fmt.Sprint(got) != want {
		t.Errorf("audit: got %v, want %v", got, want)
	}
}

func TestProxy_CloseRefusesAndEndsTunnels(t *testing.T) {
	_, port := upstream(t)
	p := policy(t, "full", false, `"domains":{"localhost":"allow"}`)
	px, err := netproxy.Start(p, nil)
	if err != nil {
		t.Fatal(err)
	}
	c, err := net.Dial("tcp", px.HTTPAddr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "CONNECT localhost:%s HTTP/1.1\r\n\r\n", port)
	br := bufio.NewReader(c)
	if status, _ := br.ReadString('\n'); status != "HTTP/1.1 200 OK\r\n" {
		t.Fatalf("CONNECT: %q", status)
	}
	px.Close() // returns only when every routine, the open tunnel's included, has ended
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.ReadAll(br); err != nil {
		t.Errorf("tunnel after Close: %v, want EOF", err)
	}
	for _, addr := range []string{px.HTTPAddr(), px.SOCKSAddr()} {
		if _, err := net.Dial("tcp", addr); !errors.Is(err, syscall.ECONNREFUSED) {
			t.Errorf("dial %s after Close: %v, want connection refused", addr, err)
		}
	}
}

func TestEnv_Variables(t *testing.T) {
	got := map[string]string{}
	for _, v := range netproxy.Env("127.0.0.1:1", "127.0.0.1:2", false) {
		got[v.Name] = v.Value
	}
	if len(got) != 34 {
		t.Errorf("%d variables, want 34", len(got))
	}
	for k, want := range map[string]string{
		"HTTP_PROXY": "http://127.0.0.1:1", "npm_config_proxy": "http://127.0.0.1:1", "ALL_PROXY": "socks5h://127.0.0.1:2",
		"ftp_proxy": "socks5h://127.0.0.1:2", "NO_PROXY": "", "CODEX_NETWORK_ALLOW_LOCAL_BINDING": "0",
		"CODEX_NETWORK_PROXY_ACTIVE": "1", "NODE_USE_ENV_PROXY": "1", "ELECTRON_GET_USE_PROXY": "true",
	} {
		if got[k] != want {
			t.Errorf("%s = %q, want %q", k, got[k], want)
		}
	}
	local := map[string]string{}
	for _, v := range netproxy.Env("127.0.0.1:1", "", true) {
		local[v.Name] = v.Value
	}
	if local["ALL_PROXY"] != "http://127.0.0.1:1" || local["no_proxy"] != "localhost,127.0.0.1,::1,10.0.0.0/8,172.16.0.0/12,192.168.0.0/16" || local["CODEX_NETWORK_ALLOW_LOCAL_BINDING"] != "1" {
		t.Errorf("allowLocalBinding env: %v", local)
	}
}

// TestProxy_ResolutionCheck: allowed names go through DNS (injected here): a name whose
// every address is local is refused not_allowed_local, as is one that does not resolve;
// a resolved address on the deny list makes the upstream fail (502).
func TestProxy_ResolutionCheck(t *testing.T) {
	_, port := upstream(t)
	p := policy(t, "full", false, `"domains":{"**.test":"allow","localhost":"allow","127.0.0.1":"deny"}`)
	px, err := netproxy.Start(p, &netproxy.Options{Resolve: func(_ context.Context, host string) ([]netip.Addr, error) {
		switch host {
		case "local.test", "localhost":
			return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
		}
		return nil, errors.New("no such host")
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(px.Close)
	for _, tt := range []struct{ host, status, body string }{
		{"local.test", "HTTP/1.1 403 Forbidden", `"reason":"not_allowed_local"`},
		{"missing.test", "HTTP/1.1 403 Forbidden", `"reason":"not_allowed_local"`},
		{"localhost", "HTTP/1.1 502 Bad Gateway", "upstream failure"},
	} {
		head, body := rawRequest(t, px.HTTPAddr(), "GET http://"+tt.host+":"+port+"/ HTTP/1.1\r\nHost: "+tt.host+":"+port+"\r\n\r\n")
		if !strings.HasPrefix(head, tt.status) || !strings.Contains(body, tt.body) {
			t.Errorf("%s: got %q %q, want %q …%s…", tt.host, head, body, tt.status, tt.body)
		}
	}
	// CONNECT answers 200 first, then closes when the upstream cannot be reached.
	head, body := rawRequest(t, px.HTTPAddr(), "CONNECT localhost:"+port+" HTTP/1.1\r\n\r\n")
	if !strings.HasPrefix(head, "HTTP/1.1 200 OK\r\ndate: ") || body != "" {
		t.Errorf("CONNECT to a blocked address: %q %q", head, body)
	}
}
