package rendezvous_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/execlab/executor/registry/rendezvous"
)

// TestSigner_KeyRing: a ring signs with its current key and names it (k=); a URL signed
// with an older key of the ring verifies until that key leaves the ring; the same ring
// loaded in another Signer (another node) verifies it too.
func TestSigner_KeyRing(t *testing.T) {
	k1, k2 := bytes.Repeat([]byte{1}, rendezvous.SignerKeyLen), bytes.Repeat([]byte{2}, rendezvous.SignerKeyLen)
	a, b := rendezvous.NewRandomSigner(), rendezvous.NewRandomSigner()
	for _, s := range []*rendezvous.Signer{a, b} {
		if err := s.SetKeys([]rendezvous.SigningKey{{ID: 41, Key: k1}}, 41); err != nil {
			t.Fatal(err)
		}
	}
	now := time.Now()
	claims := rendezvous.Claims{Role: rendezvous.RoleEnvironment, EnvironmentID: "env-1", Generation: 3, Expires: now.Add(time.Hour)}
	old := a.URL("ws://node-a:1", claims)
	path, query, _ := strings.Cut(strings.TrimPrefix(old, "ws://node-a:1"), "?")
	if q := parseQuery(t, query); q.Get("k") != "41" {
		t.Fatalf("key id in the url: got %q, want 41", q.Get("k"))
	}
	if _, err := b.Verify(path, parseQuery(t, query), now); err != nil {
		t.Fatalf("another signer with the same ring: %v", err)
	}
	// Rotation: 42 signs, 41 still verifies.
	if err := b.SetKeys([]rendezvous.SigningKey{{ID: 41, Key: k1}, {ID: 42, Key: k2}}, 42); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Verify(path, parseQuery(t, query), now); err != nil {
		t.Errorf("url of the previous key after rotation: %v", err)
	}
	fresh := b.URL("ws://node-b:1", claims)
	fpath, fquery, _ := strings.Cut(strings.TrimPrefix(fresh, "ws://node-b:1"), "?")
	if q := parseQuery(t, fquery); q.Get("k") != "42" {
		t.Errorf("key id after rotation: got %q, want 42", q.Get("k"))
	}
	if _, err := a.Verify(fpath, parseQuery(t, fquery), now); !errors.Is(err, rendezvous.ErrBadSignature) {
		t.Errorf("key 42 at a signer without it: got %v, want ErrBadSignature", err)
	}
	// Retired: 41 left the ring.
	if err := b.SetKeys([]rendezvous.SigningKey{{ID: 42, Key: k2}}, 42); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Verify(path, parseQuery(t, query), now); !errors.Is(err, rendezvous.ErrBadSignature) {
		t.Errorf("url of a retired key: got %v, want ErrBadSignature", err)
	}
	// A forged key id cannot select another key for the same signature.
	forged := parseQuery(t, query)
	forged.Set("k", "42")
	if _, err := b.Verify(path, forged, now); !errors.Is(err, rendezvous.ErrBadSignature) {
		t.Errorf("key id swapped: got %v, want ErrBadSignature", err)
	}
	forged.Set("k", "-1")
	if _, err := b.Verify(path, forged, now); !errors.Is(err, rendezvous.ErrMalformedURL) {
		t.Errorf("negative key id: got %v, want ErrMalformedURL", err)
	}
	if err := b.SetKeys([]rendezvous.SigningKey{{ID: 42, Key: k2}}, 43); err == nil {
		t.Errorf("SetKeys without the signing key: got nil, want an error")
	}
	if err := b.SetKeys([]rendezvous.SigningKey{{ID: 43, Key: k2[:5]}}, 43); err == nil {
		t.Errorf("SetKeys with a short key: got nil, want an error")
	}
}

// TestSigner_LifetimeBound: a correctly signed URL whose expiry lies further ahead than its
// role's lifetime plus MaxClockSkew is refused with ErrLifetimeExceeded, whose text does not
// carry the query; at the bound it verifies. A 100-year executor URL is the case of a
// leaked key (issue 26 finding 4).
func TestSigner_LifetimeBound(t *testing.T) {
	s := rendezvous.NewRandomSigner()
	now := time.Unix(1_800_000_000, 0)
	tests := []struct {
		role rendezvous.Role
		life time.Duration
		want error
	}{
		{rendezvous.RoleEnvironment, rendezvous.ExecutorURLTTL, nil},
		{rendezvous.RoleEnvironment, rendezvous.ExecutorURLTTL + rendezvous.MaxClockSkew, nil},
		{rendezvous.RoleEnvironment, rendezvous.ExecutorURLTTL + rendezvous.MaxClockSkew + time.Second, rendezvous.ErrLifetimeExceeded},
		{rendezvous.RoleEnvironment, 100 * 365 * 24 * time.Hour, rendezvous.ErrLifetimeExceeded},
		{rendezvous.RoleHarness, rendezvous.HarnessURLTTL, nil},
		{rendezvous.RoleHarness, rendezvous.HarnessURLTTL + rendezvous.MaxClockSkew, nil},
		{rendezvous.RoleHarness, rendezvous.HarnessURLTTL + rendezvous.MaxClockSkew + time.Second, rendezvous.ErrLifetimeExceeded},
		{rendezvous.RoleHarness, rendezvous.ExecutorURLTTL, rendezvous.ErrLifetimeExceeded},
	}
	for _, tt := range tests {
		u := s.URL("ws://h:1", rendezvous.Claims{Role: tt.role, EnvironmentID: "env-1", Generation: 1, Expires: now.Add(tt.life)})
		path, query, _ := strings.Cut(strings.TrimPrefix(u, "ws://h:1"), "?")
		q := parseQuery(t, query)
		_, err := s.Verify(path, q, now)
		if !errors.Is(err, tt.want) {
			t.Errorf("%s url living %v: got %v, want %v", tt.role, tt.life, err, tt.want)
		}
		if err != nil && strings.Contains(err.Error(), q.Get("sig")) {
			t.Errorf("%s url living %v: error %q echoes the signature", tt.role, tt.life, err)
		}
	}
	// A signed expiry near the end of int64 seconds must not wrap into acceptance
	// (time.Time.Sub saturates).
	u := s.URL("ws://h:1", rendezvous.Claims{Role: rendezvous.RoleEnvironment, EnvironmentID: "env-1", Generation: 1, Expires: time.Unix(1<<62, 0)})
	path, query, _ := strings.Cut(strings.TrimPrefix(u, "ws://h:1"), "?")
	if _, err := s.Verify(path, parseQuery(t, query), now); !errors.Is(err, rendezvous.ErrLifetimeExceeded) {
		t.Errorf("expiry 2^62 s: got %v, want ErrLifetimeExceeded", err)
	}
}
