package noise

import (
	"bytes"
	"crypto/mlkem"
	"crypto/rand"
	"errors"
	"testing"
)

// TestFillRandomKEMPublicKey_Valid: the responder's unused ML-KEM ephemeral is a valid
// encapsulation key (it parses, with the modulus check, and encapsulates), every
// coefficient is below q, and two keys differ.
func TestFillRandomKEMPublicKey_Valid(t *testing.T) {
	var a, b [KEMPublicKeyLen]byte
	for i := range 50 {
		if err := fillRandomKEMPublicKey(nil, &a, new([kemRandBlock]byte)); err != nil {
			t.Fatal(err)
		}
		ek, err := mlkem.NewEncapsulationKey768(a[:])
		if err != nil {
			t.Fatalf("key %d: got %v, want a valid encapsulation key", i, err)
		}
		if _, ct := ek.Encapsulate(); len(ct) != KEMCiphertextLen {
			t.Fatalf("key %d: got a %d-byte ciphertext, want %d", i, len(ct), KEMCiphertextLen)
		}
		for j := 0; j < kemCoefficients/2*3; j += 3 {
			c1 := uint16(a[j]) | uint16(a[j+1]&0x0f)<<8
			c2 := uint16(a[j+1])>>4 | uint16(a[j+2])<<4
			if c1 >= kemQ || c2 >= kemQ {
				t.Fatalf("key %d: coefficients %d, %d at byte %d, want < %d", i, c1, c2, j, kemQ)
			}
		}
		if bytes.Equal(a[:], b[:]) {
			t.Fatalf("key %d: same as the previous key", i)
		}
		b = a
	}
}

// TestFillRandomKEMPublicKey_RejectsHighCandidates: candidates ≥ q are skipped, not
// reduced (a reduced value would bias the distribution); an all-0xff source yields no
// coefficient and the reader's end fails the call.
func TestFillRandomKEMPublicKey_RejectsHighCandidates(t *testing.T) {
	var k [KEMPublicKeyLen]byte
	src := bytes.NewReader(bytes.Repeat([]byte{0xff}, 4*kemRandBlock))
	if err := fillRandomKEMPublicKey(src, &k, new([kemRandBlock]byte)); err == nil {
		t.Fatal("got a key from candidates that are all ≥ q, want an error")
	}
	var one [KEMPublicKeyLen]byte
	if err := fillRandomKEMPublicKey(rand.Reader, &one, new([kemRandBlock]byte)); err != nil {
		t.Fatal(err)
	}
	if err := fillRandomKEMPublicKey(errReader{}, &one, new([kemRandBlock]byte)); err == nil || !errors.Is(err, errTestRand) {
		t.Fatalf("got %v, want the reader's error", err)
	}
}

var errTestRand = errors.New("test: no randomness")

type errReader struct{}

func (errReader) Read([]byte) (int, error) { return 0, errTestRand }
