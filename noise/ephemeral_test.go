package noise

import (
	"bytes"
	"crypto/mlkem"
	"crypto/rand"
	"errors"
	"io"
	mrand "math/rand/v2"
	"testing"
)

// TestFillRandomKEMPublicKey_Valid: the responder's unused ML-KEM ephemeral is a valid
// encapsulation key (it parses, with the modulus check, and encapsulates), every
// coefficient is below q, and two keys differ.
func TestFillRandomKEMPublicKey_Valid(t *testing.T) {
	var a, b [KEMPublicKeyLen]byte
	for i := range 50 {
		if err := fillRandomKEMPublicKey(nil, &a, new([kemRandFirst]byte)); err != nil {
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
	if err := fillRandomKEMPublicKey(src, &k, new([kemRandFirst]byte)); err == nil {
		t.Fatal("got a key from candidates that are all ≥ q, want an error")
	}
	var one [KEMPublicKeyLen]byte
	if err := fillRandomKEMPublicKey(rand.Reader, &one, new([kemRandFirst]byte)); err != nil {
		t.Fatal(err)
	}
	if err := fillRandomKEMPublicKey(errReader{}, &one, new([kemRandFirst]byte)); err == nil || !errors.Is(err, errTestRand) {
		t.Fatalf("got %v, want the reader's error", err)
	}
}

var errTestRand = errors.New("test: no randomness")

type errReader struct{}

func (errReader) Read([]byte) (int, error) { return 0, errTestRand }

// fillRandomKEMPublicKeyBlockwise is the straightforward form: one 504-byte block at a
// time, a branch per candidate. The oracle for the batched, branchless one.
func fillRandomKEMPublicKeyBlockwise(r io.Reader, dst *[KEMPublicKeyLen]byte) error {
	var coeffs [kemCoefficients]uint16
	var buf [kemRandBlock]byte
	n := 0
	for n < kemCoefficients {
		if _, err := io.ReadFull(r, buf[:]); err != nil {
			return err
		}
		for i := 0; i+3 <= len(buf) && n < kemCoefficients; i += 3 {
			d1 := uint16(buf[i]) | uint16(buf[i+1]&0x0f)<<8
			d2 := uint16(buf[i+1])>>4 | uint16(buf[i+2])<<4
			if d1 < kemQ {
				coeffs[n] = d1
				n++
			}
			if d2 < kemQ && n < kemCoefficients {
				coeffs[n] = d2
				n++
			}
		}
	}
	// ByteEncode12 as FIPS 203 states it: coefficient i's bit j is bit 12·i+j of the output.
	clear(dst[:kemCoefficients/2*3])
	for i, c := range coeffs {
		for j := range 12 {
			bit := 12*i + j
			dst[bit/8] |= byte(c>>j&1) << (bit % 8)
		}
	}
	_, err := io.ReadFull(r, dst[kemCoefficients/2*3:])
	return err
}

// TestFillRandomKEMPublicKey_SameBytesAsBlockwise: for random sources, and for sources
// where three blocks do not suffice (most candidates ≥ q, so four to seven blocks are
// read), the key and the bytes consumed are exactly those of reading block by block, so
// recorded transcripts stay valid.
func TestFillRandomKEMPublicKey_SameBytesAsBlockwise(t *testing.T) {
	rng := mrand.New(mrand.NewPCG(1, 2))
	longer := 0 // sources that needed a fourth block or more and still gave a key
	for i := range 300 {
		src := make([]byte, 12*kemRandBlock)
		for j := range src {
			src[j] = byte(rng.Uint32())
		}
		if i%3 != 0 { // most bytes 0xff: most candidates are ≥ q
			for j := range src {
				if rng.IntN(100) < 55+i%40 {
					src[j] = 0xff
				}
			}
		}
		var got, want [KEMPublicKeyLen]byte
		a, b := bytes.NewReader(src), bytes.NewReader(src)
		errGot := fillRandomKEMPublicKey(a, &got, new([kemRandFirst]byte))
		errWant := fillRandomKEMPublicKeyBlockwise(b, &want)
		if (errGot == nil) != (errWant == nil) || got != want || a.Len() != b.Len() {
			t.Fatalf("source %d: err %v / %v, keys equal %v, unread %d / %d", i, errGot, errWant, got == want, a.Len(), b.Len())
		}
		if errWant == nil && len(src)-b.Len() > kemRandFirst+kemRhoLen {
			longer++
		}
	}
	if longer < 10 {
		t.Fatalf("only %d sources needed more than three blocks; the test data does not exercise the slow path", longer)
	}
}
