package credmask_test

import (
	"bufio"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/execlab/executor/executor/netproxy/credmask"
)

// TestIntercept_ComposesEndToEnd shows how the proxy is meant to use the package for an
// intercepted HTTPS request, all on 127.0.0.1: the child speaks TLS to the proxy, which
// presents a leaf minted by the executor CA; the proxy rewrites the dummy and forwards
// over TLS 1.2+ to the real server, verified against its roots (here a second CA).
func TestIntercept_ComposesEndToEnd(t *testing.T) {
	upstreamCA, _ := newCA(t)
	upLeaf, err := upstreamCA.Leaf("localhost")
	if err != nil {
		t.Fatal(err)
	}
	up := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "auth=%s", r.Header.Get("Authorization"))
	}))
	up.TLS = &tls.Config{Certificates: []tls.Certificate{*upLeaf}, MinVersion: tls.VersionTLS12}
	up.StartTLS()
	defer up.Close()
	_, portStr, _ := net.SplitHostPort(up.Listener.Addr().String())
	port, _ := strconv.Atoi(portStr)
	upRoots := x509.NewCertPool()
	upRoots.AddCert(upstreamCA.Certificate())

	ca, _ := newCA(t)
	p, err := credmask.Prepare(bashC(), map[string]string{"CUSTOM_TOK": realCustom}, &credmask.Config{Masking: true,
		Providers: customProviders(t, fmt.Sprintf(`{"c":{"env":["CUSTOM_TOK"],"patterns":["tok_[a-z]{8}"],"url_prefixes":["https://localhost:%d/v1"]}}`, port))})
	if err != nil {
		t.Fatal(err)
	}
	if !p.Broker.Intercepts("localhost", port) {
		t.Fatal("broker does not intercept the bound destination")
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	proxyDone := make(chan error, 1)
	go func() { proxyDone <- serveOneIntercepted(ln, ca, p.Broker, "localhost", port, upRoots) }()

	roots := x509.NewCertPool()
	roots.AddCert(ca.Certificate())
	for _, tc := range []struct{ path, want string }{{"/v1/models", "auth=Bearer " + realCustom}} {
		c, err := tls.Dial("tcp", ln.Addr().String(), &tls.Config{RootCAs: roots, ServerName: "localhost", MinVersion: tls.VersionTLS12})
		if err != nil {
			t.Fatalf("child handshake with the minted leaf: %v", err)
		}
		_ = c.SetDeadline(time.Now().Add(10 * time.Second))
		fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: localhost:%d\r\nAuthorization: Bearer %s\r\nConnection: close\r\n\r\n", tc.path, port, p.Env["CUSTOM_TOK"])
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		c.Close()
		if string(body) != tc.want {
			t.Errorf("%s: upstream saw %q, want %q", tc.path, body, tc.want)
		}
	}
	if err := <-proxyDone; err != nil {
		t.Fatal(err)
	}
}

// serveOneIntercepted is the proxy's side for one connection, reduced to the calls
// this package offers.
func serveOneIntercepted(ln net.Listener, ca *credmask.CA, b *credmask.Broker, host string, port int, upRoots *x509.CertPool) error {
	raw, err := ln.Accept()
	if err != nil {
		return err
	}
	defer raw.Close()
	_ = raw.SetDeadline(time.Now().Add(10 * time.Second))
	cfg, err := ca.ServerTLSConfig(host)
	if err != nil {
		return err
	}
	child := tls.Server(raw, cfg)
	req, err := http.ReadRequest(bufio.NewReader(child))
	if err != nil {
		return fmt.Errorf("reading the child's request: %w", err)
	}
	b.RewriteHeaders(credmask.Request{Scheme: "https", Host: host, Port: port, Path: req.URL.EscapedPath()}, req.Header)
	upc, err := tls.DialWithDialer(&net.Dialer{Timeout: 10 * time.Second}, "tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), credmask.UpstreamTLSConfig(host, upRoots))
	if err != nil {
		return fmt.Errorf("dialing upstream: %w", err)
	}
	defer upc.Close()
	_ = upc.SetDeadline(time.Now().Add(10 * time.Second))
	if err := req.Write(upc); err != nil {
		return err
	}
	resp, err := http.ReadResponse(bufio.NewReader(upc), req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if !strings.HasPrefix(resp.Status, "200") {
		return fmt.Errorf("upstream status %s", resp.Status)
	}
	return resp.Write(child)
}
