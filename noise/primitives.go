package noise

import (
	"crypto/subtle"
	"fmt"
	"io"

	"github.com/cloudflare/circl/dh/x25519"
	"github.com/cloudflare/circl/kem/mlkem/mlkem768"
	"github.com/oasisprotocol/curve25519-voi/curve"
	"github.com/oasisprotocol/curve25519-voi/curve/scalar"
	voi "github.com/oasisprotocol/curve25519-voi/primitives/x25519"
)

// The seam between the handshake and its two asymmetric primitives, X25519 (RFC 7748)
// and ML-KEM-768 (FIPS 203), from github.com/cloudflare/circl, except X25519 public-key
// generation, which comes from github.com/oasisprotocol/curve25519-voi (see the package
// doc, "Primitives", for why). Nothing outside this file names either library. Every function
// here computes exactly what crypto/ecdh and crypto/mlkem compute for the same inputs
// (primitives_test.go checks it against them and against RFC 7748's vectors); what
// differs is speed, and that keys are plain values this package can zero. Every ML-KEM
// call is followed by avxCleanup (avx_amd64.go): circl's AVX2 code leaves the vector
// registers in a state that slows the SHA-256 and AES code after it.

// dhKey is an X25519 private scalar (unclamped, as drawn; clamping happens inside each
// operation, as in RFC 7748) or a public u-coordinate.
type dhKey = x25519.Key

// kemEncapsulationKey is a parsed ML-KEM-768 encapsulation key (its matrix Â
// expanded); immutable once parsed, so safe to share.
type kemEncapsulationKey = mlkem768.PublicKey

// kemDecapsulationKey is an ML-KEM-768 decapsulation key; immutable once built.
type kemDecapsulationKey = mlkem768.PrivateKey

var _ = [1]struct{}{}[mlkem768.PublicKeySize-KEMPublicKeyLen+mlkem768.CiphertextSize-KEMCiphertextLen+
	mlkem768.KeySeedSize-KEMSeedLen+mlkem768.SharedKeySize-kemSharedLen+
	mlkem768.EncapsulationSeedSize-kemEncapsulationSeedLen+x25519.Size-DHLen] // sizes agree

// dhPublicKey sets pub to the X25519 public key of priv: X25519(priv, 9). It is the
// one fixed-base X25519 operation (the responder's ephemeral, once per handshake):
// curve25519-voi computes it on Edwards25519 from a precomputed table of basepoint
// multiples and converts the result to its Montgomery u-coordinate, about twice as
// fast here as circl's fixed-base ladder (BenchmarkFloor_X25519PublicKey; docs/bench.md).
// Both clamp the scalar as RFC 7748 does; primitives_test.go checks the result against
// crypto/ecdh and circl. Its table lookup uses AVX2, hence avxCleanup.
func dhPublicKey(pub, priv *dhKey) {
	voi.ScalarBaseMult((*[DHLen]byte)(pub), (*[DHLen]byte)(priv))
	avxCleanup()
}

// dh sets shared to X25519(priv, pub). A low-order pub, i.e. an all-zero result, is
// rejected with an error wrapping ErrInvalidKey and shared is zeroed: the same inputs
// crypto/ecdh rejects. circl flags pub against its list of low-order points; the
// all-zero test on the output is what crypto/ecdh and RFC 7748 §6.1 check, and it
// alone decides (the list only ever names points whose result is zero).
func dh(shared, priv, pub *dhKey) error {
	ok := x25519.Shared(shared, priv, pub)
	var zero dhKey
	if !ok || subtle.ConstantTimeCompare(shared[:], zero[:]) == 1 {
		clear(shared[:])
		return fmt.Errorf("computing X25519: %w", ErrInvalidKey)
	}
	return nil
}

// dhTable is a remote static key prepared for X25519 with many scalars: the Edwards25519
// form of 8·P (P the key's point) with a table of its multiples, as curve25519-voi keeps
// for the basepoint. The handshake's DH(e, rs) (the initiator's es, the responder's se)
// is then a fixed-base multiplication, ≈ 18 µs against ≈ 50 for the ladder
// (BenchmarkFloor_X25519Table). Building one costs ≈ 130 µs and 40 KiB, so the peer
// cache makes it once a peer comes back (peercache.go). Immutable once built; safe to
// share.
//
// Why it is X25519: a clamped scalar k is 8·k′ with k′ < 2²⁵² < ℓ, so k·P = k′·(8·P) for
// any P on the curve, torsion and all, and u(k·P) is what the Montgomery ladder computes;
// either Edwards point with P's u-coordinate gives the same u. Keys off the curve (on the
// twist) get no table and keep the ladder (newDHTable returns nil).
type dhTable struct{ t *curve.EdwardsBasepointTable }

// newDHTable prepares pub, or returns nil when pub is not the u-coordinate of a point on
// the curve (it is then on the twist) or 8·P is the identity (a low-order key, which
// the ladder rejects anyway).
func newDHTable(pub *dhKey) *dhTable {
	defer avxCleanup()
	var u curve.MontgomeryPoint
	copy(u[:], pub[:])
	var p, q curve.EdwardsPoint
	if _, err := p.SetMontgomery(&u, 0); err != nil {
		return nil
	}
	if q.MulByCofactor(&p).IsIdentity() {
		return nil
	}
	return &dhTable{t: curve.NewEdwardsBasepointTable(&q)}
}

// dh sets shared to X25519(priv, the table's key), exactly what dh(shared, priv, pub)
// computes, with the same all-zero rejection. Constant time in priv: the scalar is
// shifted, never branched on, and the table lookups and the final inversion are
// constant time.
func (t *dhTable) dh(shared, priv *dhKey) error {
	defer avxCleanup()
	var k [DHLen]byte // k′ = clamp(priv) / 8, little-endian
	for i := range DHLen - 1 {
		k[i] = priv[i]>>3 | priv[i+1]<<5
	}
	k[DHLen-1] = (priv[DHLen-1]&127 | 64) >> 3
	var s scalar.Scalar
	_, err := s.SetBytesModOrder(k[:])
	clear(k[:])
	if err != nil { // unreachable: the input is 32 bytes
		return fmt.Errorf("computing X25519: %w", err)
	}
	var r curve.EdwardsPoint
	r.MulBasepoint(t.t, &s)
	s = scalar.Scalar{}
	var out curve.MontgomeryPoint
	out.SetEdwards(&r)
	copy(shared[:], out[:])
	var zero dhKey
	if subtle.ConstantTimeCompare(shared[:], zero[:]) == 1 {
		clear(shared[:])
		return fmt.Errorf("computing X25519: %w", ErrInvalidKey)
	}
	return nil
}

// newKEMKeyPair expands a 64-byte seed d ‖ z into an ML-KEM-768 key pair
// (ML-KEM.KeyGen_internal(d, z), FIPS 203 §6.1), the same keys crypto/mlkem's
// NewDecapsulationKey768 derives from it.
func newKEMKeyPair(seed []byte) (*kemDecapsulationKey, *kemEncapsulationKey, error) {
	if len(seed) != KEMSeedLen {
		return nil, nil, fmt.Errorf("%w: want %d-byte ML-KEM seed", ErrConfig, KEMSeedLen)
	}
	ek, dk := mlkem768.NewKeyFromSeed(seed)
	avxCleanup()
	return dk, ek, nil
}

// packKEM writes ek's encoding to dst.
func packKEM(dst *[KEMPublicKeyLen]byte, ek *kemEncapsulationKey) { ek.Pack(dst[:]) }

// parseKEM parses an encapsulation key. It applies the FIPS 203 §7.2 encapsulation key
// check (every coefficient below q: circl re-encodes the decoded vector and compares),
// the check crypto/mlkem.NewEncapsulationKey768 makes; a failure wraps ErrInvalidKey.
func parseKEM(b []byte) (*kemEncapsulationKey, error) {
	ek := new(kemEncapsulationKey)
	err := ek.Unpack(b)
	avxCleanup()
	if err != nil {
		return nil, fmt.Errorf("parsing ML-KEM-768 key: %w", ErrInvalidKey)
	}
	return ek, nil
}

// encapsulate writes a ciphertext to ek into ct and its shared secret into shared. The
// encapsulation randomness m (32 bytes) is read from r (nil means crypto/rand) into the
// caller's buffer m, zeroed on return, so a deterministic r makes the ciphertext
// deterministic (ML-KEM.Encaps_internal, FIPS 203 §6.2, which
// crypto/mlkem/mlkemtest.Encapsulate768 also exposes).
func encapsulate(ct *[KEMCiphertextLen]byte, shared *[kemSharedLen]byte, ek *kemEncapsulationKey, m *[kemEncapsulationSeedLen]byte, r io.Reader) error {
	defer clear(m[:])
	if err := readRand(r, m[:]); err != nil {
		return fmt.Errorf("encapsulating: %w", err)
	}
	ek.EncapsulateTo(ct[:], shared[:], m[:])
	avxCleanup()
	return nil
}

// decapsulate writes ct's shared secret under dk into shared. It fails only on a wrong
// ciphertext length: ML-KEM rejects implicitly, so a forged ciphertext yields a
// pseudorandom secret and the next tag check fails.
func decapsulate(shared *[kemSharedLen]byte, dk *kemDecapsulationKey, ct []byte) error {
	if len(ct) != KEMCiphertextLen {
		return fmt.Errorf("decapsulating: %w", ErrInvalidKey)
	}
	dk.DecapsulateTo(shared[:], ct)
	avxCleanup()
	return nil
}
