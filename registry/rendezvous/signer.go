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
	"sync/atomic"
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
	// ErrLifetimeExceeded: the URL expires later than now plus its role's lifetime plus
	// MaxClockSkew, so no registry issued it as it stands (see MaxLifetime).
	ErrLifetimeExceeded = errors.New("rendezvous: url expiry beyond its role's lifetime")
)

// MaxLifetime is the longest a URL of role r may still be valid when it is verified: the
// lifetime a registry signs it with (ExecutorURLTTL, HarnessURLTTL) plus MaxClockSkew.
// Other roles get none.
func MaxLifetime(r Role) time.Duration {
	switch r {
	case RoleEnvironment:
		return ExecutorURLTTL + MaxClockSkew
	case RoleHarness:
		return HarnessURLTTL + MaxClockSkew
	}
	return 0
}

// Signer mints and checks rendezvous URLs with HMAC-SHA256. It holds a keyring: one current
// key that signs, and older keys that still verify (rotation: registry/server keeps the ring
// in its store, shared by every node, and replaces it with SetKeys). Safe for concurrent use;
// keys are never logged or returned.
type Signer struct {
	// ring is replaced whole by SetKeys; URL and Verify read one snapshot without locking.
	ring atomic.Pointer[keyring]
}

// keyring is an immutable set of keys by id, with the id of the signing one.
type keyring struct {
	current int64
	keys    map[int64][]byte
}

// SigningKey is one key of a Signer's ring. ID 0 is the implicit id of a single-key Signer
// (NewSigner, NewRandomSigner), whose URLs carry no key id; a ring's ids are positive and
// appear in the URL as k=<id>.
type SigningKey struct {
	ID  int64
	Key []byte // SignerKeyLen bytes
}

// SignerKeyLen is the HMAC key length NewSigner requires, in bytes.
const SignerKeyLen = 32

// NewSigner returns a Signer using key (SignerKeyLen bytes; copied).
func NewSigner(key []byte) (*Signer, error) {
	s := &Signer{}
	if err := s.SetKeys([]SigningKey{{ID: 0, Key: key}}, 0); err != nil {
		return nil, err
	}
	return s, nil
}

// NewRandomSigner returns a Signer with a fresh random key: URLs it signs die with the
// process, so executors re-register after a registry restart (they get 401 on redial).
// `registry serve` uses a persisted ring instead (registry/server.Node).
func NewRandomSigner() *Signer {
	k := make([]byte, SignerKeyLen)
	_, _ = rand.Read(k) // crypto/rand never fails on supported platforms
	s, _ := NewSigner(k)
	return s
}

// SetKeys replaces the ring: keys verify URLs that name their id, and current (one of
// them) signs new URLs. Keys are copied. A URL whose key is no longer in the ring fails
// Verify with ErrBadSignature.
func (s *Signer) SetKeys(keys []SigningKey, current int64) error {
	r := &keyring{current: current, keys: make(map[int64][]byte, len(keys))}
	for _, k := range keys {
		if len(k.Key) != SignerKeyLen {
			return fmt.Errorf("rendezvous: signer key %d is %d bytes, want %d", k.ID, len(k.Key), SignerKeyLen)
		}
		if k.ID < 0 {
			return fmt.Errorf("rendezvous: signer key id %d is negative", k.ID)
		}
		r.keys[k.ID] = append([]byte(nil), k.Key...)
	}
	if _, ok := r.keys[current]; !ok {
		return fmt.Errorf("rendezvous: signer ring has no key %d to sign with", current)
	}
	s.ring.Store(r)
	return nil
}

// KeyIDs returns the ids of the ring's keys and the signing one (tests, logs).
func (s *Signer) KeyIDs() (ids []int64, current int64) {
	r := s.ring.Load()
	for id := range r.keys {
		ids = append(ids, id)
	}
	return ids, r.current
}

// URL returns the signed websocket URL for c under base (the rendezvous's public ws:// or
// wss:// base, without a trailing slash). A zero Nonce gets a random one.
//
//	{base}/rendezvous/v1/{role}/{environment_id}?g={generation}&e={expiry unix s}[&k={key id}]&n={nonce}[&t={subject}]&sig={b64url hmac}
//
// k names the ring key that signed (absent for key id 0). The base (host) is not signed: a
// URL verifies on every node sharing the ring, which is what lets a harness URL minted by
// one node be served by the node that holds the executor's socket.
func (s *Signer) URL(base string, c Claims) string {
	r := s.ring.Load()
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
	if r.current != 0 {
		q.Set("k", strconv.FormatInt(r.current, 10))
	}
	q.Set("sig", base64.RawURLEncoding.EncodeToString(mac(r.keys[r.current], c)))
	return strings.TrimRight(base, "/") + BasePath + string(c.Role) + "/" + c.EnvironmentID + "?" + q.Encode()
}

// Verify checks the path and query of an upgrade request against the signature and now.
// path is the request path (BasePath + role + "/" + environment id). A URL is refused when
// its signature does not check (ErrBadSignature), once it has expired (ErrExpired), and
// when it expires more than MaxLifetime(role) after now (ErrLifetimeExceeded): whoever
// holds a key still cannot mint a URL that lives longer than the registry's own. Errors
// never carry the query.
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
	var kid int64
	if k := query.Get("k"); k != "" {
		if kid, err1 = strconv.ParseInt(k, 10, 64); err1 != nil || kid <= 0 {
			return Claims{}, ErrMalformedURL
		}
	}
	key, ok := s.ring.Load().keys[kid]
	if !ok {
		return Claims{}, ErrBadSignature
	}
	c := Claims{Role: Role(role), EnvironmentID: env, Generation: gen, Expires: time.Unix(exp, 0), Nonce: query.Get("n"), Subject: query.Get("t")}
	if !hmac.Equal(sig, mac(key, c)) {
		return Claims{}, ErrBadSignature
	}
	if !now.Before(c.Expires) {
		return Claims{}, ErrExpired
	}
	if c.Expires.Sub(now) > MaxLifetime(c.Role) {
		return Claims{}, ErrLifetimeExceeded
	}
	return c, nil
}

// mac is HMAC-SHA256 over a length-prefixed encoding of the claims, so no field can bleed
// into another.
func mac(key []byte, c Claims) []byte {
	m := hmac.New(sha256.New, key)
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
