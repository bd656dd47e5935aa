package noise

import (
	"crypto/rand"
	"fmt"
	"io"
	"log/slog"
)

// PublicKey is a static public identity: an X25519 public key and an ML-KEM-768
// encapsulation key. It is a comparable value; == compares both halves.
//
// Its String, GoString, Format and LogValue forms show the suite only, never key bytes
// (spec/relay-noise.md §14). The byte fields are exported for codecs; do not log them.
//
//	+-----------------------+---------------------------------------+
//	| X25519 (32 B)         | MLKEM768 encapsulation key (1184 B)   |
//	+-----------------------+---------------------------------------+
type PublicKey struct {
	X25519   [DHLen]byte
	MLKEM768 [KEMPublicKeyLen]byte
}

const redactedKey = SuiteLabel + "{x25519_public_key:<redacted>, mlkem768_public_key:<redacted>}"

// String returns the suite with redacted components.
func (PublicKey) String() string { return redactedKey }

// GoString returns the same redacted form, so %#v cannot leak key bytes.
func (PublicKey) GoString() string { return redactedKey }

// Format makes every fmt verb (including %x and %+v) print the redacted form.
func (PublicKey) Format(f fmt.State, _ rune) { _, _ = io.WriteString(f, redactedKey) }

// LogValue renders the key for log/slog as the suite only.
func (PublicKey) LogValue() slog.Value { return slog.StringValue(redactedKey) }

// Validate reports whether both halves parse: ML-KEM encoding checks (FIPS 203 modulus
// check) and the X25519 length. It returns an error wrapping ErrInvalidKey.
func (pk *PublicKey) Validate() error {
	if _, err := parseKEM(pk.MLKEM768[:]); err != nil {
		return fmt.Errorf("parsing ML-KEM-768 public key: %w", ErrInvalidKey)
	}
	return nil
}

// Identity is a static key pair: X25519 plus ML-KEM-768. Its keys are immutable; it is
// safe for concurrent use; one executor process generates one and reuses it for every
// stream (spec/relay-noise.md §5.3). It keeps a small cache of the peers' static keys
// its handshakes completed with (peercache.go). It never prints private material.
type Identity struct {
	x     dhKey // X25519 private scalar
	kem   *kemDecapsulationKey
	pub   PublicKey
	peers peerCache
}

// GenerateIdentity creates a new identity from rand (nil means crypto/rand): 32 bytes
// for the X25519 private key, then the 64-byte ML-KEM-768 seed.
func GenerateIdentity(r io.Reader) (*Identity, error) {
	var buf [ephemeralRandLen]byte
	defer clear(buf[:])
	if err := readRand(r, buf[:]); err != nil {
		return nil, fmt.Errorf("generating identity: %w", err)
	}
	return NewIdentity(buf[:DHLen], buf[DHLen:])
}

// NewIdentity builds an identity from an X25519 private scalar (32 bytes) and an
// ML-KEM-768 seed d ‖ z (64 bytes). The inputs are copied; the caller may zero them.
func NewIdentity(x25519Private, mlkemSeed []byte) (*Identity, error) {
	if len(x25519Private) != DHLen || len(mlkemSeed) != KEMSeedLen {
		return nil, fmt.Errorf("building identity: %w: want %d-byte X25519 key and %d-byte ML-KEM seed",
			ErrConfig, DHLen, KEMSeedLen)
	}
	id := &Identity{}
	copy(id.x[:], x25519Private)
	dhPublicKey((*dhKey)(&id.pub.X25519), &id.x)
	kem, ek, err := newKEMKeyPair(mlkemSeed)
	if err != nil {
		return nil, fmt.Errorf("building identity: %w", err)
	}
	id.kem = kem
	packKEM(&id.pub.MLKEM768, ek)
	return id, nil
}

// Public returns the identity's public key.
func (id *Identity) Public() PublicKey { return id.pub }

// String returns a redacted form.
func (id *Identity) String() string { return "noise.Identity{" + SuiteLabel + ", <redacted>}" }

// GoString returns a redacted form.
func (id *Identity) GoString() string { return id.String() }

// LogValue renders the identity for log/slog as the suite only.
func (id *Identity) LogValue() slog.Value { return slog.StringValue(id.String()) }

func readRand(r io.Reader, b []byte) error {
	if r == nil {
		r = rand.Reader
	}
	if _, err := io.ReadFull(r, b); err != nil {
		return fmt.Errorf("reading randomness: %w", err)
	}
	return nil
}
