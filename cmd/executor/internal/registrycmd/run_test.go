package registrycmd_test

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/execlab/executor/cmd/executor/internal/registrycmd"
	"github.com/execlab/executor/internal/syncbuf"
	"github.com/execlab/executor/registry/api"
	"github.com/execlab/executor/registry/registrytest"
	"github.com/execlab/executor/registry/server"
	"github.com/execlab/executor/relay/wsconn"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.IgnoreTopFunction("net/http.(*persistConn).writeLoop"),
		goleak.IgnoreTopFunction("net/http.(*persistConn).readLoop"),
		goleak.IgnoreTopFunction("internal/poll.runtime_pollWait"))
}

// selfSigned writes a fresh self-signed certificate for 127.0.0.1 and its key as PEM files
// and returns their paths and a pool trusting it.
func selfSigned(t *testing.T) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "registry test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage:    x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kder}), 0o600); err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	pool = x509.NewCertPool()
	pool.AddCert(cert)
	return certFile, keyFile, pool
}

// keyJSON returns a well-formed random public-key JSON (registry-auth.md §9).
var keyJSON = registrytest.RandomKeyJSON

// TestStart_TLS: with a certificate and key the registry serves HTTPS, hands out wss://
// rendezvous URLs that work with the same trust, and logs no plaintext warning.
func TestStart_TLS(t *testing.T) {
	certFile, keyFile, pool := selfSigned(t)
	tokens, err := server.ParseTokens(strings.NewReader("tok roles=executor envs=env-1\n"))
	if err != nil {
		t.Fatal(err)
	}
	var logs syncbuf.Buffer
	svc, err := registrycmd.Start(context.Background(), registrycmd.Config{Listen: "127.0.0.1:0", DB: ":memory:", Tokens: tokens,
		TLSCertFile: certFile, TLSKeyFile: keyFile, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close()
	if !strings.HasPrefix(svc.URL, "https://127.0.0.1:") {
		t.Fatalf("service url: got %q, want https://127.0.0.1:…", svc.URL)
	}
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: 5 * time.Second}
	if resp, err := http.Get(strings.Replace(svc.URL, "https://", "http://", 1) + "/readyz"); err == nil {
		resp.Body.Close()
		if resp.StatusCode != 400 { // net/http: "client sent an HTTP request to an HTTPS server"
			t.Errorf("plain HTTP to the TLS listener: got %d, want 400 or an error", resp.StatusCode)
		}
	}
	body, _ := json.Marshal(api.RegisterRequest{SecurityProfile: api.SecurityProfile, ExecutorPublicKey: keyJSON()})
	req, _ := http.NewRequest(http.MethodPost, svc.URL+api.Path("env-1", api.RegisterSuffix), bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer tok")
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("register over TLS: %v", err)
	}
	defer resp.Body.Close()
	var reg api.RegisterResponse
	if err := json.NewDecoder(resp.Body).Decode(&reg); err != nil || resp.StatusCode != 200 {
		t.Fatalf("register over TLS: got %d (%v)", resp.StatusCode, err)
	}
	if !strings.HasPrefix(reg.URL, "wss://127.0.0.1:") {
		t.Fatalf("rendezvous url: got a %q… url, want wss://", reg.URL[:6])
	}
	c, err := wsconn.Dial(context.Background(), reg.URL, &wsconn.DialOptions{HTTPClient: client})
	if err != nil {
		t.Fatalf("dialing the wss:// rendezvous url: %v", err)
	}
	c.Close()
	if strings.Contains(logs.String(), "without TLS") {
		t.Errorf("TLS listener logged the plaintext warning: %s", logs.String())
	}
}

// TestStart_Warnings: a non-loopback listener without TLS, and tokens granting every role
// or environment, are logged at start-up (without the token).
func TestStart_Warnings(t *testing.T) {
	tokens, err := server.ParseTokens(strings.NewReader("secret-bare\nsecret-envs roles=harness envs=*\nsecret-ok roles=harness envs=e\n"))
	if err != nil {
		t.Fatal(err)
	}
	var logs syncbuf.Buffer
	svc, err := registrycmd.Start(context.Background(), registrycmd.Config{Listen: "0.0.0.0:0", DB: ":memory:", Tokens: tokens,
		Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	svc.Close()
	out := logs.String()
	for _, want := range []string{"non-loopback address without TLS", "every role in every environment", "line=1", "every environment (add envs", "line=2"} {
		if !strings.Contains(out, want) {
			t.Errorf("start-up log lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "secret") || strings.Contains(out, "line=3") {
		t.Errorf("start-up log echoes a token or flags the scoped one:\n%s", out)
	}
	var quiet syncbuf.Buffer
	svc, err = registrycmd.Start(context.Background(), registrycmd.Config{Listen: "127.0.0.1:0", DB: ":memory:",
		Tokens: mustTokens(t, "t roles=harness envs=e\n"), Logger: slog.New(slog.NewTextHandler(&quiet, nil))})
	if err != nil {
		t.Fatal(err)
	}
	svc.Close()
	if strings.Contains(quiet.String(), "level=WARN") {
		t.Errorf("loopback listener with scoped tokens logged a warning:\n%s", quiet.String())
	}
}

func mustTokens(t *testing.T, s string) *server.Tokens {
	t.Helper()
	tk, err := server.ParseTokens(strings.NewReader(s))
	if err != nil {
		t.Fatal(err)
	}
	return tk
}

// TestCheckTokenFile warns about group/world-readable token files only.
func TestCheckTokenFile(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		mode os.FileMode
		warn bool
	}{{0o600, false}, {0o640, true}, {0o604, true}, {0o400, false}} {
		p := filepath.Join(dir, "tokens")
		if err := os.WriteFile(p, []byte("t roles=harness envs=e\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, tc.mode); err != nil {
			t.Fatal(err)
		}
		var logs syncbuf.Buffer
		registrycmd.CheckTokenFile(p, slog.New(slog.NewTextHandler(&logs, nil)))
		if got := strings.Contains(logs.String(), "readable by group or others"); got != tc.warn {
			t.Errorf("mode %#o: warned %v, want %v", tc.mode, got, tc.warn)
		}
	}
}
