package credmask_test

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/execlab/executor/executor/netproxy/credmask"
)

func newCA(t *testing.T) (*credmask.CA, string) {
	t.Helper()
	home := t.TempDir()
	ca, err := credmask.NewCA(&credmask.CAOptions{CodexHome: home, SystemRootsPEM: []byte{}})
	if err != nil {
		t.Fatal(err)
	}
	return ca, home
}

func TestCA_FilesAndModes(t *testing.T) {
	ca, home := newCA(t)
	dir := filepath.Join(home, "proxy")
	st, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o700 {
		t.Errorf("proxy dir mode %v, want 0700", st.Mode().Perm())
	}
	if !strings.HasPrefix(filepath.Base(ca.CertPath()), "ca-") || filepath.Dir(ca.CertPath()) != dir {
		t.Errorf("cert path %q, want %s/ca-<sha256>.pem", ca.CertPath(), dir)
	}
	if !strings.HasPrefix(filepath.Base(ca.TrustBundlePath()), "ca-bundle-") {
		t.Errorf("bundle path %q, want ca-bundle-<sha256>.pem", ca.TrustBundlePath())
	}
	key := ca.KeyPEMForTest()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 2 {
		t.Errorf("proxy dir holds %d entries, want 2 (cert and bundle)", len(entries))
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(b, []byte("PRIVATE KEY")) || bytes.Contains(b, key) {
			t.Errorf("%s holds a private key: the CA key must stay in memory", e.Name())
		}
		info, _ := e.Info()
		if info.Mode().Perm()&0o022 != 0 {
			t.Errorf("%s mode %v is group/world writable", e.Name(), info.Mode().Perm())
		}
	}
	bundle, err := os.ReadFile(ca.TrustBundlePath())
	if err != nil || !bytes.HasSuffix(bundle, ca.CertPEM()) {
		t.Errorf("bundle does not end with the CA certificate (%v)", err)
	}
	// A second executor (rotation) gets a new CA and new files beside the old ones.
	ca2, err := credmask.NewCA(&credmask.CAOptions{CodexHome: home, SystemRootsPEM: []byte("# roots\n")})
	if err != nil {
		t.Fatal(err)
	}
	if ca2.Fingerprint() == ca.Fingerprint() || ca2.CertPath() == ca.CertPath() {
		t.Error("a new CA reused the old one")
	}
	for _, v := range []string{fmt.Sprint(ca), fmt.Sprintf("%+v", ca), fmt.Sprintf("%#v", ca)} {
		if strings.Contains(v, "PRIVATE") || strings.Contains(v, string(key)) {
			t.Errorf("formatted CA leaks its key: %.80s", v)
		}
	}
}

// TestCA_LeafVerifiesOverTLS serves TLS on 127.0.0.1 with a minted leaf for localhost
// and connects with a client that trusts only the CA.
func TestCA_LeafVerifiesOverTLS(t *testing.T) {
	ca, _ := newCA(t)
	cfg, err := ca.ServerTLSConfig("localhost")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.MinVersion != tls.VersionTLS12 {
		t.Errorf("server MinVersion %x, want TLS 1.2", cfg.MinVersion)
	}
	ln, err := tls.Listen("tcp", "127.0.0.1:0", cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	done := make(chan error, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			done <- err
			return
		}
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(10 * time.Second))
		line, err := bufio.NewReader(c).ReadString('\n')
		if err == nil {
			_, err = io.WriteString(c, "echo "+line)
		}
		done <- err
	}()
	roots := x509.NewCertPool()
	roots.AddCert(ca.Certificate())
	ucfg := credmask.UpstreamTLSConfig("localhost", roots)
	conn, err := tls.DialWithDialer(&net.Dialer{Timeout: 10 * time.Second}, "tcp", ln.Addr().String(), ucfg)
	if err != nil {
		t.Fatalf("client trusting only the CA: %v", err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(conn, "hi\n"); err != nil {
		t.Fatal(err)
	}
	got, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil || got != "echo hi\n" {
		t.Fatalf("read %q, %v", got, err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	// A client that does not trust the CA fails: the system roots do not know it.
	ln2, err := tls.Listen("tcp", "127.0.0.1:0", cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer ln2.Close()
	go func() {
		c, err := ln2.Accept()
		if err == nil {
			_ = c.(*tls.Conn).Handshake()
			c.Close()
		}
	}()
	c2, err := tls.Dial("tcp", ln2.Addr().String(), credmask.UpstreamTLSConfig("localhost", x509.NewCertPool()))
	if err == nil {
		c2.Close()
		t.Fatal("a client without the CA accepted the minted leaf")
	}
	// The leaf is for localhost, not another name.
	leaf, _ := ca.Leaf("localhost")
	if err := leaf.Leaf.VerifyHostname("example.com"); err == nil {
		t.Error("leaf for localhost verifies example.com")
	}
	ipLeaf, err := ca.Leaf("127.0.0.1")
	if err != nil || ipLeaf.Leaf.VerifyHostname("127.0.0.1") != nil {
		t.Errorf("IP leaf: %v", err)
	}
}

func TestCA_LeafCacheBounded(t *testing.T) {
	ca, _ := newCA(t)
	a1, _ := ca.Leaf("a.example")
	a2, _ := ca.Leaf("A.example.")
	if a1 != a2 {
		t.Error("same host minted twice")
	}
	for i := range credmask.LeafCacheSize + 10 {
		if _, err := ca.Leaf(fmt.Sprintf("h%d.example", i)); err != nil {
			t.Fatal(err)
		}
	}
	if n := ca.LeafCacheLen(); n != credmask.LeafCacheSize {
		t.Errorf("cache holds %d leaves, want %d", n, credmask.LeafCacheSize)
	}
	if _, err := ca.Leaf(""); err == nil {
		t.Error("Leaf(\"\") succeeded")
	}
}

// TestCAPossible: the check behind the credentialMasking* flags creates nothing and
// refuses an empty CODEX_HOME and one below a regular file.
func TestCAPossible(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for home, ok := range map[string]bool{
		"": false, dir: true, filepath.Join(dir, "new", "deeper"): true,
		file: false, filepath.Join(file, "home"): false,
	} {
		if err := credmask.CAPossible(home); (err == nil) != ok {
			t.Errorf("CAPossible(%q) = %v, want ok=%v", home, err, ok)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "new")); err == nil {
		t.Error("CAPossible created a directory")
	}
}

// TestCA_LeafChainIsLeafOnly: an intercepted host presents its leaf alone, as 0.171.0
// does (the CA reaches clients through the trust bundle).
func TestCA_LeafChainIsLeafOnly(t *testing.T) {
	ca, err := credmask.NewCA(&credmask.CAOptions{CodexHome: t.TempDir(), SystemRootsPEM: []byte{}})
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := ca.Leaf("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	if len(leaf.Certificate) != 1 || leaf.Leaf.CheckSignatureFrom(ca.Certificate()) != nil {
		t.Errorf("leaf chain of %d certificates (signed by the CA: %v), want the leaf alone", len(leaf.Certificate), leaf.Leaf.CheckSignatureFrom(ca.Certificate()))
	}
}
