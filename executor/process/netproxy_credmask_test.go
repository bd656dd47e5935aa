package process_test

import (
	"bytes"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/execlab/executor/executor/netproxy/credmask"
	"github.com/execlab/executor/executor/process"
	"github.com/execlab/executor/executor/protocol"
)

// lockedBuffer is a bytes.Buffer safe for the log handler's concurrent writes.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// authRecorder is a loopback HTTPS server that records the Authorization headers it
// receives and answers a fixed body (never the header: the child must not see it).
type authRecorder struct {
	srv  *httptest.Server
	mu   sync.Mutex
	auth []string
}

func newAuthRecorder(t *testing.T, name string) *authRecorder {
	a := &authRecorder{}
	a.srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a.mu.Lock()
		a.auth = append(a.auth, r.Header.Get("Authorization"))
		a.mu.Unlock()
		fmt.Fprintf(w, "%s %s", name, r.URL.Path)
	}))
	t.Cleanup(a.srv.Close)
	return a
}

func (a *authRecorder) got() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.auth...)
}

// TestStart_CredentialMaskingHTTPS: with credentialMasking and a custom provider bound
// to https://127.0.0.1:PORT_A/, a bash -c child sees only the dummy; curl through the
// proxy (trusting the CA bundle the child's CURL_CA_BUNDLE points at) reaches server A,
// which receives the real token (the tunnel is intercepted and the header rewritten);
// server B, another HTTPS host:port, receives the dummy through an opaque tunnel. The
// executor's debug log of the whole run never holds the real token
// (spec/network-proxy.md §9.2, §9.3).
func TestStart_CredentialMaskingHTTPS(t *testing.T) {
	const real = "tok_abcdefgh"
	a, b := newAuthRecorder(t, "A"), newAuthRecorder(t, "B")
	ca, err := credmask.NewCA(&credmask.CAOptions{CodexHome: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AddCert(a.srv.Certificate())
	var logBuf lockedBuffer
	log := slog.New(slog.NewTextHandler(&logBuf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	m := newManager(t, &process.Options{
		Logger:        log,
		CredentialCA:  func() (*credmask.CA, error) { return ca, nil },
		UpstreamRoots: roots,
	})
	portA := a.srv.Listener.Addr().String()[len("127.0.0.1:"):]
	// B's own certificate: trusting only it reaches B (its tunnel is opaque) and fails
	// on A, whose certificate the interception CA minted (trusted through the bundle).
	bCert := filepath.Join(t.TempDir(), "b.pem")
	if err := os.WriteFile(bCert, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: b.srv.Certificate().Raw}), 0o644); err != nil {
		t.Fatal(err)
	}
	script := `echo "child=$CT"
echo "bundle=$([ "$CURL_CA_BUNDLE" = "$SSL_CERT_FILE" ] && [ -s "$CURL_CA_BUNDLE" ] && echo ok)"
curl -sS --max-time 20 -H "Authorization: Bearer $CT" ` + a.srv.URL + `/a; echo
curl -sS --max-time 20 --cacert ` + bCert + ` -H "Authorization: Bearer $CT" ` + b.srv.URL + `/b; echo
echo "a-without-bundle=$(curl -s -o /dev/null -w '%{http_code}' --max-time 20 --cacert ` + bCert + ` ` + a.srv.URL + `/c)"`
	p := startParams("masked", tmpURI(t), "bash", "-c", script)
	p.Env["CT"] = real
	p.NetworkProxy = proxyConfig(`,"domains":{"127.0.0.1":"allow"},"credentialMasking":true,"credentialProviders":{"c":{` +
		`"env":["CT"],"patterns":["tok_[a-z]{8}"],"url_prefixes":["https://127.0.0.1:` + portA + `/"],"auth":["bearer"]}}`)
	mustStart(t, m, p)
	out, _ := readUntilClosed(t, m, "masked")
	stdout, stderr := string(out[protocol.StreamStdout]), string(out[protocol.StreamStderr])
	if strings.Contains(stdout+stderr, real) {
		t.Errorf("the child saw the real token:\n%s\n%s", stdout, stderr)
	}
	dummy := regexp.MustCompile(`(?m)^child=(tok_[a-z]{8})$`).FindStringSubmatch(stdout)
	if dummy == nil {
		t.Fatalf("child output %q (stderr %q), want child=<tok_ dummy>", stdout, stderr)
	}
	for _, want := range []string{"bundle=ok\n", "A /a\n", "B /b\n", "a-without-bundle=000\n"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("child stdout %q lacks %q (stderr %q)", stdout, want, stderr)
		}
	}
	if got := a.got(); len(got) != 1 || got[0] != "Bearer "+real {
		t.Errorf("server A (authorized) received %q, want the real token once", got)
	}
	if got := b.got(); len(got) != 1 || got[0] != "Bearer "+dummy[1] {
		t.Errorf("server B (not authorized) received %q, want the dummy %q once", got, dummy[1])
	}
	logs := logBuf.String()
	if strings.Contains(logs, real) {
		t.Errorf("the debug log holds the real token:\n%s", logs)
	}
	if !strings.Contains(logs, "credential headers translated") {
		t.Errorf("the debug log lacks the translation line (the run did not exercise interception?):\n%s", logs)
	}
	if _, err := os.Stat(ca.TrustBundlePath()); err != nil {
		t.Errorf("trust bundle: %v", err)
	}
}
