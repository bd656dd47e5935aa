package credmask

// The per-executor MITM CA (§9.2, §9.3).
//
// As codex 0.171.0 does (probed): one CA per executor process, its private key held in
// memory only and never written; its certificate written to
// $CODEX_HOME/proxy/ca-<sha256 of the PEM>.pem and a trust bundle (the system roots
// followed by the CA) to $CODEX_HOME/proxy/ca-bundle-<sha256 of the bundle>.pem, the
// path the 13 CA variables carry. We create the proxy directory 0700 and the files
// 0644 (certificates are public; the directory keeps other users out). Restarting the
// executor rotates the CA; the old files are inert (their key is gone) and may be
// deleted. Leaf certificates are minted per intercepted host (ECDSA P-256, serverAuth,
// DNS or IP SAN) and kept in an LRU of LeafCacheSize. Only crypto/x509 and crypto/tls:
// no hand-written ASN.1.

import (
	"bytes"
	"container/list"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// Validity periods: our choice.
const (
	caValidity   = 365 * 24 * time.Hour
	leafValidity = 7 * 24 * time.Hour
	// leafRenewBefore: a cached leaf closer than this to its expiry is re-minted.
	leafRenewBefore = 24 * time.Hour
	clockSkew       = time.Hour
)

// systemRootFiles are the Linux bundle locations crypto/x509 also reads.
var systemRootFiles = []string{
	"/etc/ssl/certs/ca-certificates.crt",
	"/etc/pki/tls/certs/ca-bundle.crt",
	"/etc/ssl/ca-bundle.pem",
	"/etc/pki/tls/cacert.pem",
	"/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem",
	"/etc/ssl/cert.pem",
}

// CAOptions configures NewCA. Never mutated; nil fields take defaults.
type CAOptions struct {
	// CodexHome is $CODEX_HOME; required.
	CodexHome string
	// SystemRootsPEM is copied into the trust bundle before the CA; nil reads the first
	// existing systemRootFiles entry (at most 4 MiB).
	SystemRootsPEM []byte
	// Logger gets debug lines with paths and the CA fingerprint only; nil discards.
	Logger *slog.Logger
	// Now is the clock; nil is time.Now.
	Now func() time.Time
}

// CA is the executor's interception CA. Safe for concurrent use. Its String and
// LogValue print the certificate fingerprint only.
type CA struct {
	cert       *x509.Certificate
	certPEM    []byte
	key        *ecdsa.PrivateKey // never leaves the process
	certPath   string
	bundlePath string
	now        func() time.Time
	log        *slog.Logger

	mu     sync.Mutex               // guards leaves and lru: the leaf cache is shared by all tunnels
	leaves map[string]*list.Element // host → element of lru holding *leafEntry
	lru    *list.List
}

type leafEntry struct {
	host string
	cert *tls.Certificate
}

// NewCA generates the CA and writes its certificate and trust bundle under
// CodexHome/proxy.
func NewCA(opts *CAOptions) (*CA, error) {
	o := CAOptions{}
	if opts != nil {
		o = *opts
	}
	if o.CodexHome == "" {
		return nil, errors.New("credmask: CA needs CODEX_HOME")
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generating CA key: %w", err)
	}
	now := o.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          randomSerial(),
		Subject:               pkix.Name{CommonName: "executor network proxy MITM CA", Organization: []string{"executor"}},
		NotBefore:             now.Add(-clockSkew),
		NotAfter:              now.Add(caValidity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		return nil, fmt.Errorf("creating CA certificate: %w", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("parsing CA certificate: %w", err)
	}
	ca := &CA{
		cert: cert, key: key, now: o.Now, log: o.Logger,
		certPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		leaves:  map[string]*list.Element{}, lru: list.New(),
	}
	dir := filepath.Join(o.CodexHome, caDirName)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("creating %s: %w", dir, err)
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return nil, fmt.Errorf("restricting %s: %w", dir, err)
	}
	if ca.certPath, err = writeHashed(dir, caCertPrefix, ca.certPEM); err != nil {
		return nil, err
	}
	roots := o.SystemRootsPEM
	if roots == nil {
		roots = readSystemRoots()
	}
	bundle := make([]byte, 0, len(roots)+len(ca.certPEM)+1)
	bundle = append(bundle, roots...)
	if len(bundle) > 0 && bundle[len(bundle)-1] != '\n' {
		bundle = append(bundle, '\n')
	}
	bundle = append(bundle, ca.certPEM...)
	if ca.bundlePath, err = writeHashed(dir, caBundlePrefix, bundle); err != nil {
		return nil, err
	}
	ca.log.Debug("network proxy CA ready", "component", "credmask", "fingerprint", ca.Fingerprint(),
		"cert", ca.certPath, "bundle", ca.bundlePath)
	return ca, nil
}

func randomSerial() *big.Int {
	n, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	return n.Add(n, big.NewInt(1))
}

func readSystemRoots() []byte {
	for _, f := range systemRootFiles {
		fh, err := os.Open(f)
		if err != nil {
			continue
		}
		b, err := io.ReadAll(io.LimitReader(fh, maxSystemRootsBytes))
		_ = fh.Close()
		if err == nil && len(b) > 0 {
			return b
		}
	}
	return nil
}

// writeHashed writes data to dir/<prefix><sha256 hex>.pem (0644) atomically, unless a
// file with that name and content already exists; it returns the path.
func writeHashed(dir, prefix string, data []byte) (string, error) {
	sum := sha256.Sum256(data)
	path := filepath.Join(dir, prefix+hex.EncodeToString(sum[:])+caFileSuffix)
	if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, data) {
		return path, nil
	}
	tmp, err := os.CreateTemp(dir, ".tmp-"+prefix)
	if err != nil {
		return "", fmt.Errorf("writing %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		_ = tmp.Close()
		return "", fmt.Errorf("writing %s: %w", path, err)
	}
	if err := tmp.Chmod(0o644); err != nil {
		_ = tmp.Close()
		return "", fmt.Errorf("writing %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return "", fmt.Errorf("writing %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return "", fmt.Errorf("writing %s: %w", path, err)
	}
	return path, nil
}

// CertPEM returns the CA certificate (public).
func (c *CA) CertPEM() []byte { return bytes.Clone(c.certPEM) }

// Certificate returns the parsed CA certificate.
func (c *CA) Certificate() *x509.Certificate { return c.cert }

// CertPath is $CODEX_HOME/proxy/ca-<sha256>.pem.
func (c *CA) CertPath() string { return c.certPath }

// TrustBundlePath is $CODEX_HOME/proxy/ca-bundle-<sha256>.pem: the value of the 13 CA
// variables (Config.CABundlePath).
func (c *CA) TrustBundlePath() string { return c.bundlePath }

// Fingerprint is the SHA-256 of the CA certificate, hex.
func (c *CA) Fingerprint() string {
	sum := sha256.Sum256(c.cert.Raw)
	return hex.EncodeToString(sum[:])
}

// String prints the fingerprint only.
func (c *CA) String() string { return "credmask.CA{sha256:" + c.Fingerprint() + "}" }

// LogValue prints the fingerprint only.
func (c *CA) LogValue() slog.Value { return slog.StringValue(c.String()) }

// Leaf returns a certificate for host (a DNS name or IP literal) signed by the CA,
// minted on first use and cached.
func (c *CA) Leaf(host string) (*tls.Certificate, error) {
	host = normalizeHost(host)
	if host == "" {
		return nil, errors.New("credmask: leaf certificate needs a host")
	}
	now := c.now()
	c.mu.Lock()
	if e, ok := c.leaves[host]; ok {
		le := e.Value.(*leafEntry)
		if le.cert.Leaf.NotAfter.Sub(now) > leafRenewBefore {
			c.lru.MoveToFront(e)
			c.mu.Unlock()
			return le.cert, nil
		}
	}
	c.mu.Unlock()
	cert, err := c.mint(host, now)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.leaves[host]; ok {
		e.Value = &leafEntry{host: host, cert: cert}
		c.lru.MoveToFront(e)
		return cert, nil
	}
	c.leaves[host] = c.lru.PushFront(&leafEntry{host: host, cert: cert})
	for c.lru.Len() > LeafCacheSize {
		old := c.lru.Back()
		c.lru.Remove(old)
		delete(c.leaves, old.Value.(*leafEntry).host)
	}
	return cert, nil
}

func (c *CA) mint(host string, now time.Time) (*tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generating leaf key: %w", err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: randomSerial(),
		Subject:      pkix.Name{CommonName: host},
		NotBefore:    now.Add(-clockSkew),
		NotAfter:     now.Add(leafValidity),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	if ip := net.ParseIP(host); ip != nil {
		tmpl.IPAddresses = []net.IP{ip}
	} else {
		tmpl.DNSNames = []string{host}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, c.cert, key.Public(), c.key)
	if err != nil {
		return nil, fmt.Errorf("signing leaf certificate: %w", err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("parsing leaf certificate: %w", err)
	}
	c.log.Debug("minted leaf certificate", "component", "credmask", "host", host)
	// The leaf alone, as 0.171.0 presents it (a client trusting only the upstream's
	// certificate reports "unable to get local issuer certificate", not a self-signed
	// certificate in the chain); clients trust the CA through the trust bundle.
	return &tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, nil
}

// ServerTLSConfig is the child-facing TLS config of an intercepted tunnel to host: the
// leaf for host (the CONNECT target the broker authorized, whatever the SNI says),
// TLS 1.2 or newer, HTTP/1.1 only (the forwarder speaks HTTP/1.1).
func (c *CA) ServerTLSConfig(host string) (*tls.Config, error) {
	leaf, err := c.Leaf(host)
	if err != nil {
		return nil, err
	}
	return &tls.Config{
		MinVersion:   tls.VersionTLS12,
		Certificates: []tls.Certificate{*leaf},
		NextProtos:   []string{"http/1.1"},
	}, nil
}

// UpstreamTLSConfig is the TLS config towards the real destination: TLS 1.2 or newer,
// verified against roots (nil: the system roots) for serverName, HTTP/1.1.
func UpstreamTLSConfig(serverName string, roots *x509.CertPool) *tls.Config {
	return &tls.Config{
		MinVersion: tls.VersionTLS12,
		ServerName: normalizeHost(serverName),
		RootCAs:    roots,
		NextProtos: []string{"http/1.1"},
	}
}
