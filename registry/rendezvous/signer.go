package rendezvous

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Role is the kind of socket a signed URL admits.
type Role string

const (
	RoleEnvironment Role = "environment" // the executor's socket
	RoleHarness     Role = "harness"     // one harness connection attempt
)

// Claims are what a signed URL asserts.
type Claims struct {
	Role          Role
	EnvironmentID string
	Generation    int64
	Expires       time.Time // second precision
	Nonce         string    // random; makes every URL distinct
	// Subject names who the URL was issued to: the harness token's id (registry/server),
	// by which the Hub counts sockets and failed streams. Empty for executor URLs.
	Subject string
}

// Signing errors. All make the upgrade fail with HTTP 401.
var (
	ErrBadSignature = errors.New("rendezvous: bad url signature")
	ErrExpired      = errors.New("rendezvous: url expired")
	ErrMalformedURL = errors.New("rendezvous: malformed rendezvous url")
)

// Signer mints and checks rendezvous URLs with HMAC-SHA256. Safe for concurrent use; the key
// is never logged or returned.
type Signer struct {
	key []byte
}

// SignerKeyLen is the HMAC key length NewSigner requires, in bytes.
const SignerKeyLen = 32

// NewSigner returns a Signer using key (SignerKeyLen bytes; copied).
func NewSigner(key []byte) (*Signer, error) {
	if len(key) != SignerKeyLen {
		return nil, fmt.Errorf("rendezvous: signer key is %d bytes, want %d", len(key), SignerKeyLen)
	}
	return &Signer{key: append([]byte(nil), key...)}, nil
}

// NewRandomSigner returns a Signer with a fresh random key: URLs it signs die with the
// process, so executors re-register after a registry restart (they get 401 on redial).
func NewRandomSigner() *Signer {
	k := make([]byte, SignerKeyLen)
	_, _ = rand.Read(k) // crypto/rand never fails on supported platforms
	return &Signer{key: k}
}

// URL returns the signed websocket URL for c under base (the rendezvous's public ws:// or
// wss:// base, without a trailing slash). A zero Nonce gets a random one.
//
//	{base}/rendezvous/v1/{role}/{environment_id}?g={generation}&e={expiry unix s}&n={nonce}[&t={subject}]&sig={b64url hmac}
func (s *Signer) URL(base string, c Claims) string {
	if c.Nonce == "" {
		var n [12]byte
		_, _ = rand.Read(n[:])
		c.Nonce = base64.RawURLEncoding.EncodeToString(n[:])
	}
	q := url.Values{}
	q.Set("g", strconv.FormatInt(c.Generation, 10))
	q.Set("e", strconv.FormatInt(c.Expires.Unix(), 10))
	q.Set("n", c.Nonce)
	if c.Subject != "" {
		q.Set("t", c.Subject)
	}
	q.Set("sig", base64.RawURLEncoding.EncodeToString(s.mac(c)))
	return strings.TrimRight(base, "/") + BasePath + string(c.Role) + "/" + c.EnvironmentID + "?" + q.Encode()
}

// Verify checks the path and query of an upgrade request against the signature and now.
// path is the request path (BasePath + role + "/" + environment id).
func (s *Signer) Verify(path string, query url.Values, now time.Time) (Claims, error) {
	rest, ok := strings.CutPrefix(path, BasePath)
	if !ok {
		return Claims{}, ErrMalformedURL
	}
	role, env, ok := strings.Cut(rest, "/")
	if !ok || env == "" || strings.Contains(env, "/") || (Role(role) != RoleEnvironment && Role(role) != RoleHarness) {
		return Claims{}, ErrMalformedURL
	}
	gen, err1 := strconv.ParseInt(query.Get("g"), 10, 64)
	exp, err2 := strconv.ParseInt(query.Get("e"), 10, 64)
	sig, err3 := base64.RawURLEncoding.DecodeString(query.Get("sig"))
	if err1 != nil || err2 != nil || err3 != nil || query.Get("n") == "" {
		return Claims{}, ErrMalformedURL
	}
	c := Claims{Role: Role(role), EnvironmentID: env, Generation: gen, Expires: time.Unix(exp, 0), Nonce: query.Get("n"), Subject: query.Get("t")}
	if !hmac.Equal(sig, s.mac(c)) {
		return Claims{}, ErrBadSignature
	}
	if !now.Before(c.Expires) {
		return Claims{}, ErrExpired
	}
	return c, nil
}

// mac is HMAC-SHA256 over a length-prefixed encoding of the claims, so no field can bleed
// into another.
func (s *Signer) mac(c Claims) []byte {
	m := hmac.New(sha256.New, s.key)
	var n [8]byte
	for _, f := range []string{"codex-rendezvous/v1", string(c.Role), c.EnvironmentID, c.Nonce, c.Subject} {
		binary.BigEndian.PutUint64(n[:], uint64(len(f)))
		m.Write(n[:])
		m.Write([]byte(f))
	}
	binary.BigEndian.PutUint64(n[:], uint64(c.Generation))
	m.Write(n[:])
	binary.BigEndian.PutUint64(n[:], uint64(c.Expires.Unix()))
	m.Write(n[:])
	return m.Sum(nil)
}
