package netproxy_test

import (
	"bufio"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/execlab/executor/executor/netproxy"
	"github.com/execlab/executor/executor/netproxy/credmask"
)

// authServer records the Authorization headers it receives.
type authServer struct {
	srv  *httptest.Server
	mu   sync.Mutex
	seen []string
}

func newAuthServer(t *testing.T, tlsOn bool) *authServer {
	t.Helper()
	a := &authServer{}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a.mu.Lock()
		a.seen = append(a.seen, r.Header.Get("Authorization"))
		a.mu.Unlock()
		_, _ = io.WriteString(w, "ok")
	})
	if tlsOn {
		a.srv = httptest.NewTLSServer(h)
	} else {
		a.srv = httptest.NewServer(h)
	}
	t.Cleanup(a.srv.Close)
	return a
}

func (a *authServer) got() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.seen...)
}

// maskedProxy starts a proxy allowing 127.0.0.1 with a broker for CT=real bound to
// prefixes, and returns it with the child's dummy and the CA.
func maskedProxy(t *testing.T, roots *x509.CertPool, prefixes ...string) (*netproxy.Proxy, string, *credmask.CA) {
	t.Helper()
	ca, err := credmask.NewCA(&credmask.CAOptions{CodexHome: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	pj, _ := json.Marshal(prefixes)
	var provs credmask.Providers
	if err := json.Unmarshal([]byte(`{"c":{"env":["CT"],"patterns":["tok_[a-z]{8}"],"url_prefixes":`+string(pj)+`,"auth":["bearer"]}}`), &provs); err != nil {
		t.Fatal(err)
	}
	prep, err := credmask.Prepare([]string{"bash", "-c", "x"}, map[string]string{"CT": "tok_abcdefgh"},
		&credmask.Config{Masking: true, Providers: provs, CABundlePath: ca.TrustBundlePath()})
	if err != nil || prep.Broker == nil {
		t.Fatalf("Prepare: %v, broker %v", err, prep)
	}
	px, err := netproxy.Start(policy(t, "full", false, `"domains":{"127.0.0.1":"allow"}`), &netproxy.Options{CA: ca, UpstreamRoots: roots})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(px.Close)
	px.SetBroker(prep.Broker)
	return px, prep.Env["CT"], ca
}

// TestProxy_CredentialSwap: the dummy becomes the real value for the credential's
// destinations only: an intercepted HTTPS tunnel (the client trusts the CA) and a plain
// HTTP destination get the real token; an HTTPS host:port outside the prefixes gets an
// opaque tunnel and the dummy.
func TestProxy_CredentialSwap(t *testing.T) {
	secure, plain, other := newAuthServer(t, true), newAuthServer(t, false), newAuthServer(t, true)
	roots := x509.NewCertPool()
	roots.AddCert(secure.srv.Certificate())
	px, dummy, ca := maskedProxy(t, roots, secure.srv.URL+"/", plain.srv.URL+"/")
	if dummy == "tok_abcdefgh" || !strings.HasPrefix(dummy, "tok_") {
		t.Fatalf("dummy %q", dummy)
	}
	childRoots := x509.NewCertPool()
	childRoots.AddCert(ca.Certificate())
	childRoots.AddCert(other.srv.Certificate())
	u, _ := url.Parse("http://" + px.HTTPAddr())
	c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		Proxy: http.ProxyURL(u), DisableKeepAlives: true, TLSClientConfig: &tls.Config{RootCAs: childRoots},
	}}
	for _, s := range []*authServer{secure, plain, other} {
		req, _ := http.NewRequest("GET", s.srv.URL+"/x", nil)
		req.Header.Set("Authorization", "Bearer "+dummy)
		resp, err := c.Do(req)
		if err != nil {
			t.Fatalf("GET %s: %v", s.srv.URL, err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	for name, tc := range map[string]struct {
		s    *authServer
		want string
	}{"intercepted https": {secure, "Bearer tok_abcdefgh"}, "plain http": {plain, "Bearer tok_abcdefgh"}, "other https": {other, "Bearer " + dummy}} {
		if got := tc.s.got(); len(got) != 1 || got[0] != tc.want {
			t.Errorf("%s: server received %q, want %q", name, got, tc.want)
		}
	}
}

// TestProxy_InterceptedTunnelClose: Close ends intercepted tunnels that stall before
// the TLS handshake or before the request, and returns (goleak checks the routines).
func TestProxy_InterceptedTunnelClose(t *testing.T) {
	secure := newAuthServer(t, true)
	px, _, ca := maskedProxy(t, nil, secure.srv.URL+"/")
	host := strings.TrimPrefix(secure.srv.URL, "https://")
	connect := func() (net.Conn, *bufio.Reader) {
		c, err := net.Dial("tcp", px.HTTPAddr())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		_, _ = io.WriteString(c, "CONNECT "+host+" HTTP/1.1\r\nHost: "+host+"\r\n\r\n")
		br := bufio.NewReader(c)
		line, err := br.ReadString('\n')
		if err != nil || !strings.HasPrefix(line, "HTTP/1.1 200") {
			t.Fatalf("CONNECT: %q %v", line, err)
		}
		for l, _ := br.ReadString('\n'); l != "\r\n" && l != ""; l, _ = br.ReadString('\n') {
		}
		return c, br
	}
	connect() // no TLS handshake at all
	c2, _ := connect()
	pool := x509.NewCertPool()
	pool.AddCert(ca.Certificate())
	tc := tls.Client(c2, &tls.Config{RootCAs: pool, ServerName: "127.0.0.1"})
	if err := tc.Handshake(); err != nil {
		t.Fatalf("handshake with the minted leaf: %v", err)
	}
	done := make(chan struct{})
	go func() { px.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Close did not return with stalled intercepted tunnels")
	}
	if got := secure.got(); len(got) != 0 {
		t.Errorf("upstream received %q, want nothing", got)
	}
}
