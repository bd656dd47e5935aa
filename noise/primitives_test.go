package noise

import (
	"bytes"
	"crypto/ecdh"
	"crypto/mlkem"
	"crypto/mlkem/mlkemtest"
	"crypto/rand"
	"encoding/hex"
	"errors"
	mrand "math/rand/v2"
	"testing"

	"github.com/cloudflare/circl/dh/x25519"
)

// The primitives come from circl (primitives.go); these tests prove they compute what
// RFC 7748, FIPS 203 and the standard library compute, byte for byte, so the switch
// changed speed only.

func unhex32(t *testing.T, s string) (k dhKey) {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil || len(b) != DHLen {
		t.Fatalf("bad test vector %q", s)
	}
	copy(k[:], b)
	return k
}

// TestX25519_RFC7748: the test vectors of RFC 7748 §5.2 (including the iterated ones,
// 1 and 1,000 iterations) and the Diffie-Hellman example of §6.1.
func TestX25519_RFC7748(t *testing.T) {
	for _, v := range []struct{ scalar, u, out string }{
		{"a546e36bf0527c9d3b16154b82465edd62144c0ac1fc5a18506a2244ba449ac4",
			"e6db6867583030db3594c1a424b15f7c726624ec26b3353b10a903a6d0ab1c4c",
			"c3da55379de9c6908e94ea4df28d084f32eccf03491c71f754b4075577a28552"},
		{"4b66e9d4d1b4673c5ad22691957d6af5c11b6421e0ea01d42ca4169e7918ba0d",
			"e5210f12786811d3f4b7959d0538ae2c31dbe7106fc03c3efc4cd549c715a493",
			"95cbde9476e8907d7aade45cb4b873f88b595a68799fa152e6f8f7647aac7957"},
	} {
		k, u, want := unhex32(t, v.scalar), unhex32(t, v.u), unhex32(t, v.out)
		var got dhKey
		if err := dh(&got, &k, &u); err != nil || got != want {
			t.Errorf("X25519(%s…, %s…) = %x, %v; want %x", v.scalar[:8], v.u[:8], got, err, want)
		}
	}

	// §5.2 iterations: k = u = 9; then k, u = X25519(k, u), k.
	k, u := dhKey{9}, dhKey{9}
	for i := 1; i <= 1000; i++ {
		var r dhKey
		if err := dh(&r, &k, &u); err != nil {
			t.Fatal(err)
		}
		u, k = k, r
		switch i {
		case 1:
			if want := unhex32(t, "422c8e7a6227d7bca1350b3e2bb7279f7897b87bb6854b783c60e80311ae3079"); k != want {
				t.Fatalf("after 1 iteration: %x, want %x", k, want)
			}
		case 1000:
			if want := unhex32(t, "684cf59ba83309552800ef566f2f4d3c1c3887c49360e3875f2eb94d99532c51"); k != want {
				t.Fatalf("after 1,000 iterations: %x, want %x", k, want)
			}
		}
	}

	// §6.1: Alice and Bob.
	alice := unhex32(t, "77076d0a7318a57d3c16c17251b26645df4c2f87ebc0992ab177fba51db92c2a")
	bob := unhex32(t, "5dab087e624a8a4b79e17f8b83800ee66f3bb1292618b6fd1c2f8b27ff88e0eb")
	var alicePub, bobPub, s1, s2 dhKey
	dhPublicKey(&alicePub, &alice)
	dhPublicKey(&bobPub, &bob)
	if want := unhex32(t, "8520f0098930a754748b7ddcb43ef75a0dbf3a0d26381af4eba4a98eaa9b4e6a"); alicePub != want {
		t.Errorf("Alice's public key = %x, want %x", alicePub, want)
	}
	if want := unhex32(t, "de9edb7d7b7dc1b4d35b61c2ece435373f8343c85b78674dadfc7e146f882b4f"); bobPub != want {
		t.Errorf("Bob's public key = %x, want %x", bobPub, want)
	}
	want := unhex32(t, "4a5d9d5ba4ce2de1728e3bf480350f25e07e21c947d19e3376f09b3c1e161742")
	if err := dh(&s1, &alice, &bobPub); err != nil || s1 != want {
		t.Errorf("Alice's shared secret = %x, %v; want %x", s1, err, want)
	}
	if err := dh(&s2, &bob, &alicePub); err != nil || s2 != want {
		t.Errorf("Bob's shared secret = %x, %v; want %x", s2, err, want)
	}
}

// TestX25519_MatchesCryptoECDH: on random keys (and public keys with the top bit set,
// which RFC 7748 masks) the public keys and shared secrets equal crypto/ecdh's.
func TestX25519_MatchesCryptoECDH(t *testing.T) {
	for i := range 200 {
		var priv, peer dhKey
		rand.Read(priv[:])
		rand.Read(peer[:])
		if i%2 == 1 {
			peer[31] |= 0x80
		}
		std, err := ecdh.X25519().NewPrivateKey(priv[:])
		if err != nil {
			t.Fatal(err)
		}
		var pub dhKey
		dhPublicKey(&pub, &priv)
		if !bytes.Equal(pub[:], std.PublicKey().Bytes()) {
			t.Fatalf("key %d: public key differs from crypto/ecdh's", i)
		}
		stdPeer, err := ecdh.X25519().NewPublicKey(peer[:])
		if err != nil {
			t.Fatal(err)
		}
		want, wantErr := std.ECDH(stdPeer)
		var got dhKey
		gotErr := dh(&got, &priv, &peer)
		if (gotErr != nil) != (wantErr != nil) || (gotErr == nil && !bytes.Equal(got[:], want)) {
			t.Fatalf("key %d: got %x, %v; crypto/ecdh %x, %v", i, got, gotErr, want, wantErr)
		}
	}
}

// TestX25519_RejectsLowOrderLikeCryptoECDH: every encoding of a low-order point after
// RFC 7748's masking of the top bit (the canonical ones and p, p+1), with the top bit
// clear or set, fails with ErrInvalidKey and a zeroed output, exactly
// where crypto/ecdh fails (its all-zero-output check); the same handshake error as
// before the switch.
func TestX25519_RejectsLowOrderLikeCryptoECDH(t *testing.T) {
	points := []string{
		"0000000000000000000000000000000000000000000000000000000000000000", // 0, order 2
		"0100000000000000000000000000000000000000000000000000000000000000", // 1, order 4
		"e0eb7a7c3b41b8ae1656e3faf19fc46ada098deb9c32b1fd866205165f49b800", // order 8
		"5f9c95bca3508c24b1d0b1559c83ef5b04445cc4581c8e86d8224eddd09f1157", // order 8
		"ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f", // p-1
		"edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f", // p (≡ 0)
		"eeffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f", // p+1 (≡ 1)
	}
	var priv dhKey
	rand.Read(priv[:])
	std, _ := ecdh.X25519().NewPrivateKey(priv[:])
	for _, p := range points {
		for _, top := range []byte{0, 0x80} {
			pub := unhex32(t, p)
			pub[31] |= top
			stdPub, _ := ecdh.X25519().NewPublicKey(pub[:])
			if _, err := std.ECDH(stdPub); err == nil {
				t.Fatalf("%s (top %#x): crypto/ecdh accepts it; the list is wrong", p, top)
			}
			got := dhKey{1}
			if err := dh(&got, &priv, &pub); !errors.Is(err, ErrInvalidKey) {
				t.Errorf("%s (top %#x): got %v, want ErrInvalidKey", p, top, err)
			}
			if got != (dhKey{}) {
				t.Errorf("%s (top %#x): output %x left after a rejection, want zeros", p, top, got)
			}
		}
	}
}

// TestMLKEM_KeysFromSeedMatchCryptoMLKEM: the same 64-byte seed d ‖ z gives the same
// encapsulation key in crypto/mlkem and here.
func TestMLKEM_KeysFromSeedMatchCryptoMLKEM(t *testing.T) {
	for i := range 20 {
		seed := make([]byte, KEMSeedLen)
		rand.Read(seed)
		std, err := mlkem.NewDecapsulationKey768(seed)
		if err != nil {
			t.Fatal(err)
		}
		_, ek, err := newKEMKeyPair(seed)
		if err != nil {
			t.Fatal(err)
		}
		var got [KEMPublicKeyLen]byte
		packKEM(&got, ek)
		if !bytes.Equal(got[:], std.EncapsulationKey().Bytes()) {
			t.Fatalf("seed %d: encapsulation key differs from crypto/mlkem's", i)
		}
	}
}

// TestMLKEM_InteroperatesWithCryptoMLKEM: with the same randomness m, encapsulation
// yields the ciphertext and key crypto/mlkem/mlkemtest.Encapsulate768 yields; each
// side decapsulates the other's ciphertexts to the same key; a tampered ciphertext
// decapsulates to the same implicit-rejection key on both.
func TestMLKEM_InteroperatesWithCryptoMLKEM(t *testing.T) {
	for i := range 20 {
		seed := make([]byte, KEMSeedLen)
		rand.Read(seed)
		stdDK, _ := mlkem.NewDecapsulationKey768(seed)
		dk, _, _ := newKEMKeyPair(seed)
		ek, err := parseKEM(stdDK.EncapsulationKey().Bytes())
		if err != nil {
			t.Fatal(err)
		}

		m := make([]byte, kemEncapsulationSeedLen)
		rand.Read(m)
		var ct [KEMCiphertextLen]byte
		var ss [kemSharedLen]byte
		if err := encapsulate(&ct, &ss, ek, new([kemEncapsulationSeedLen]byte), bytes.NewReader(m)); err != nil {
			t.Fatal(err)
		}
		wantSS, wantCT, err := mlkemtest.Encapsulate768(stdDK.EncapsulationKey(), m)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(ct[:], wantCT) || !bytes.Equal(ss[:], wantSS) {
			t.Fatalf("case %d: encapsulation with fixed m differs from crypto/mlkem's", i)
		}

		// ours → crypto/mlkem
		if got, err := stdDK.Decapsulate(ct[:]); err != nil || !bytes.Equal(got, ss[:]) {
			t.Fatalf("case %d: crypto/mlkem decapsulated our ciphertext to %x, %v; want %x", i, got, err, ss)
		}
		// crypto/mlkem → ours
		stdSS, stdCT := stdDK.EncapsulationKey().Encapsulate()
		var got [kemSharedLen]byte
		if err := decapsulate(&got, dk, stdCT); err != nil || !bytes.Equal(got[:], stdSS) {
			t.Fatalf("case %d: we decapsulated crypto/mlkem's ciphertext to %x, %v; want %x", i, got, err, stdSS)
		}
		// implicit rejection
		stdCT[i%len(stdCT)] ^= 1
		wantRej, _ := stdDK.Decapsulate(stdCT)
		if err := decapsulate(&got, dk, stdCT); err != nil || !bytes.Equal(got[:], wantRej) {
			t.Fatalf("case %d: tampered ciphertext decapsulated to %x, %v; crypto/mlkem %x", i, got, err, wantRej)
		}
		if bytes.Equal(wantRej, stdSS) {
			t.Fatalf("case %d: tampered ciphertext gave the real key", i)
		}
	}
	var ss [kemSharedLen]byte
	dk, _, _ := newKEMKeyPair(make([]byte, KEMSeedLen))
	if err := decapsulate(&ss, dk, make([]byte, KEMCiphertextLen-1)); !errors.Is(err, ErrInvalidKey) {
		t.Fatalf("short ciphertext: got %v, want ErrInvalidKey", err)
	}
}

// TestMLKEM_ParseRejectsLikeCryptoMLKEM: the FIPS 203 §7.2 modulus check. A valid key
// with one coefficient replaced by a random 12-bit value is accepted exactly when the
// value is below q, as by crypto/mlkem; the boundary values q-1 (accepted), q and 4095
// (rejected with ErrInvalidKey) are checked explicitly, and so are wrong lengths.
func TestMLKEM_ParseRejectsLikeCryptoMLKEM(t *testing.T) {
	dk, _ := mlkem.GenerateKey768()
	valid := dk.EncapsulationKey().Bytes()
	setCoeff := func(ek []byte, i int, v uint16) {
		o := i / 2 * 3
		if i%2 == 0 {
			ek[o] = byte(v)
			ek[o+1] = ek[o+1]&0xf0 | byte(v>>8)
		} else {
			ek[o+1] = ek[o+1]&0x0f | byte(v<<4)
			ek[o+2] = byte(v >> 4)
		}
	}
	r := mrand.New(mrand.NewPCG(1, 2))
	check := func(i int, v uint16) {
		t.Helper()
		ek := bytes.Clone(valid)
		setCoeff(ek, i, v)
		_, stdErr := mlkem.NewEncapsulationKey768(ek)
		_, err := parseKEM(ek)
		if (err == nil) != (v < kemQ) || (stdErr == nil) != (v < kemQ) {
			t.Fatalf("coefficient %d = %d: got %v, crypto/mlkem %v; want accepted iff < %d", i, v, err, stdErr, kemQ)
		}
		if err != nil && !errors.Is(err, ErrInvalidKey) {
			t.Fatalf("coefficient %d = %d: got %v, want ErrInvalidKey", i, v, err)
		}
	}
	for _, v := range []uint16{0, kemQ - 1, kemQ, 4095} {
		check(0, v)
		check(kemCoefficients-1, v)
	}
	for range 300 {
		check(r.IntN(kemCoefficients), uint16(r.IntN(4096)))
	}
	for _, n := range []int{0, KEMPublicKeyLen - 1, KEMPublicKeyLen + 1} {
		if _, err := parseKEM(make([]byte, n)); !errors.Is(err, ErrInvalidKey) {
			t.Errorf("%d-byte key: got %v, want ErrInvalidKey", n, err)
		}
	}
	pk := PublicKey{}
	copy(pk.MLKEM768[:], valid)
	setCoeff(pk.MLKEM768[:], 5, kemQ)
	if err := pk.Validate(); !errors.Is(err, ErrInvalidKey) {
		t.Errorf("Validate with a coefficient = q: got %v, want ErrInvalidKey", err)
	}
}

// TestX25519PublicKey_MatchesCircl: the fixed-base operation (curve25519-voi) gives
// circl's fixed-base ladder's result for random scalars and for the scalars that clamp
// to the extremes (all bits clear, all bits set, only the bits clamping clears).
func TestX25519PublicKey_MatchesCircl(t *testing.T) {
	scalars := []dhKey{{}, {0: 7, 31: 0x80}}
	var ones dhKey
	for i := range ones {
		ones[i] = 0xff
	}
	scalars = append(scalars, ones)
	for range 2000 {
		var k dhKey
		rand.Read(k[:])
		scalars = append(scalars, k)
	}
	for i, priv := range scalars {
		var got, want dhKey
		dhPublicKey(&got, &priv)
		x25519.KeyGen(&want, &priv)
		if got != want {
			t.Fatalf("scalar %d (%x): public key %x, circl %x", i, priv, got, want)
		}
	}
}
