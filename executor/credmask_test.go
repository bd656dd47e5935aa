package executor_test

import (
	"bytes"
	"crypto/x509"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/execlab/executor/executor"
	"github.com/execlab/executor/internal/syncbuf"
)

// maskingProxy is a networkProxy member with credential masking and, when urlPrefix is
// set, a custom provider for $CT bound to it.
func maskingProxy(urlPrefix string) map[string]any {
	proxy := map[string]any{
		"enabled": true, "enableSocks5": false, "enableSocks5Udp": false, "allowUpstreamProxy": false,
		"dangerouslyAllowAllUnixSockets": false, "mode": "full", "allowLocalBinding": false,
		"domains": map[string]string{"127.0.0.1": "allow"}, "credentialMasking": true,
	}
	if urlPrefix != "" {
		proxy["credentialProviders"] = map[string]any{"c": map[string]any{
			"env": []string{"CT"}, "patterns": []string{"tok_[a-z]{8}"}, "url_prefixes": []string{urlPrefix}, "auth": []string{"bearer"},
		}}
	}
	return map[string]any{"proxy": proxy}
}

// TestServer_CredentialMasking: with a CODEX_HOME the executor advertises and honours
// credentialMasking and credentialMaskingCustomProviders, creates its CA under
// CODEX_HOME/proxy (the key is never written: only certificates, no file holds a
// private key, the directory is 0700), and an HTTPS request of a bash -c child to the
// provider's destination reaches the server with the real token while the child held
// the dummy. The executor's debug log of the whole run never contains the real token.
// Without a CODEX_HOME, or with one where the CA cannot be created, the flags are
// absent; without one the launch is refused (fail closed).
func TestServer_CredentialMasking(t *testing.T) {
	const real = "tok_abcdefgh"
	var mu sync.Mutex
	var received []string
	up := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		received = append(received, r.Header.Get("Authorization"))
		mu.Unlock()
		_, _ = w.Write([]byte("upstream-ok"))
	}))
	defer up.Close()
	roots := x509.NewCertPool()
	roots.AddCert(up.Certificate())
	home := t.TempDir()
	var logBuf syncbuf.Buffer
	h := newHarness(t, &executor.Options{
		CodexHome:     home,
		UpstreamRoots: roots,
		Logger:        slog.New(slog.NewTextHandler(&logBuf, &slog.HandlerOptions{Level: slog.LevelDebug})),
	})
	c := h.dial()
	init := c.Handshake("")
	caps := initCaps(init)
	if caps["credentialMasking"] != true || caps["credentialMaskingCustomProviders"] != true {
		t.Errorf("capabilities %v, want credentialMasking and credentialMaskingCustomProviders", caps)
	}
	out := filepath.Join(t.TempDir(), "out")
	p := startParams("m", "bash", "-c", `{ echo "child=$CT"; curl -sS --max-time 20 -H "Authorization: Bearer $CT" `+up.URL+`/x; echo; } >`+out+` 2>&1`)
	p["env"].(map[string]string)["CT"] = real
	p["networkProxy"] = maskingProxy(up.URL + "/")
	resp, notes := c.Call(1, "process/start", p)
	if resp["error"] != nil {
		t.Fatalf("process/start: %v", resp)
	}
	waitNotification(c, notes, "process/closed")
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	got := string(b)
	if strings.Contains(got, real) || !regexp.MustCompile(`(?m)^child=tok_[a-z]{8}$`).MatchString(got) || !strings.Contains(got, "upstream-ok") {
		t.Errorf("child output %q, want a tok_ dummy (never the real token) and the upstream's answer", got)
	}
	mu.Lock()
	if len(received) != 1 || received[0] != "Bearer "+real {
		t.Errorf("upstream received %q, want the real token once", received)
	}
	mu.Unlock()
	if m, _ := filepath.Glob(filepath.Join(home, "proxy", "ca-bundle-*.pem")); len(m) != 1 {
		t.Errorf("trust bundles under CODEX_HOME/proxy: %v, want one", m)
	}
	if fi, err := os.Stat(filepath.Join(home, "proxy")); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("CODEX_HOME/proxy: %v %v, want a 0700 directory", fi, err)
	}
	files, _ := os.ReadDir(filepath.Join(home, "proxy"))
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(home, "proxy", f.Name()))
		if err != nil || bytes.Contains(b, []byte("PRIVATE KEY")) || strings.Contains(f.Name(), "key") {
			t.Errorf("CODEX_HOME/proxy/%s holds key material (err %v); the CA key stays in memory", f.Name(), err)
		}
	}
	if logs := logBuf.String(); strings.Contains(logs, real) || !strings.Contains(logs, "credential headers translated") {
		t.Errorf("debug log (want the translation line, never the real token):\n%s", logs)
	}

	// A CODEX_HOME under a regular file: the CA cannot be created, not advertised.
	blocker := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(blocker, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	h3 := newHarness(t, &executor.Options{CodexHome: filepath.Join(blocker, "home")})
	caps3 := initCaps(h3.dial().Handshake(""))
	if _, ok := caps3["credentialMasking"]; ok {
		t.Errorf("capabilities with an unusable CODEX_HOME %v, want no credentialMasking", caps3)
	}

	// No CODEX_HOME: not advertised, refused before anything runs.
	h2 := newHarness(t, nil)
	c2 := h2.dial()
	caps2 := initCaps(c2.Handshake(""))
	if _, ok := caps2["credentialMasking"]; ok {
		t.Errorf("capabilities without CODEX_HOME %v, want no credentialMasking", caps2)
	}
	p2 := startParams("n", "true")
	p2["networkProxy"] = maskingProxy("")
	resp2, _ := c2.Call(1, "process/start", p2)
	if code, msg := errMessage(resp2); code != -32602 || msg != "network proxy launch is unsupported on this executor" {
		t.Errorf("without CODEX_HOME: %v, want -32602 network proxy launch is unsupported on this executor", resp2)
	}
}
