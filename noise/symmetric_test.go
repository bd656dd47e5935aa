package noise

import (
	"bytes"
	"crypto/hkdf"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"testing"
)

// TestSymmetric_HKDFMatchesCryptoHKDF: the allocation-free Noise HKDF equals RFC 5869
// HKDF-SHA256 (crypto/hkdf) with salt ck and empty info for 1–3 outputs, and hmac
// equals crypto/hmac, over input lengths around the block size.
func TestSymmetric_HKDFMatchesCryptoHKDF(t *testing.T) {
	var ss symmetricState
	ss.initialize()
	for _, n := range []int{0, 1, 32, 55, 56, 63, 64, 65, 1088, 1184} {
		ikm := make([]byte, n)
		rand.Read(ikm)
		rand.Read(ss.ck[:])
		for outs := 1; outs <= 3; outs++ {
			want, err := hkdf.Key(sha256.New, ikm, ss.ck[:], "", outs*HashLen)
			if err != nil {
				t.Fatal(err)
			}
			ss.hkdf(ikm, outs)
			got := bytes.Join([][]byte{ss.outs[0][:], ss.outs[1][:], ss.outs[2][:]}, nil)[:outs*HashLen]
			if !bytes.Equal(got, want) {
				t.Fatalf("HKDF(%d-byte ikm, %d outputs) = %x, want %x", n, outs, got, want)
			}
			if ss.temp != ([HashLen]byte{}) || ss.pad != ([sha256.BlockSize]byte{}) || ss.inner != ([HashLen]byte{}) {
				t.Fatalf("HKDF(%d-byte ikm) left key material in its scratch", n)
			}
		}
		m := hmac.New(sha256.New, ss.ck[:])
		m.Write(ikm)
		m.Write([]byte{7})
		var got [HashLen]byte
		ss.hmac(&got, &ss.ck, ikm, []byte{7})
		if !bytes.Equal(got[:], m.Sum(nil)) {
			t.Fatalf("HMAC(%d-byte input) = %x, want %x", n+1, got, m.Sum(nil))
		}
	}
}

// TestSymmetric_MixHash: h = SHA-256(h ‖ data), with the digest reused call after call.
func TestSymmetric_MixHash(t *testing.T) {
	var ss symmetricState
	ss.initialize()
	want := ss.h
	for _, n := range []int{0, 32, 1088, 1184} {
		data := make([]byte, n)
		rand.Read(data)
		want = sha256.Sum256(append(want[:], data...))
		ss.mixHash(data)
		if ss.h != want {
			t.Fatalf("after mixing %d bytes: h = %x, want %x", n, ss.h, want)
		}
	}
}
