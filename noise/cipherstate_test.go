package noise_test

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"encoding/binary"
	"errors"
	"testing"

	"github.com/execlab/executor/noise"
)

// transportPair returns (initiator send, responder recv) after a real handshake.
func transportPair(t testing.TB) (send, recv *noise.CipherState) {
	t.Helper()
	p := newPair(t, nil, nil)
	msg1, err := p.init.WriteMessage(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.resp.ReadMessage(nil, msg1); err != nil {
		t.Fatal(err)
	}
	msg2, err := p.resp.WriteMessage(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.init.ReadMessage(nil, msg2); err != nil {
		t.Fatal(err)
	}
	send, _, err = p.init.Split()
	if err != nil {
		t.Fatal(err)
	}
	_, recv, err = p.resp.Split()
	if err != nil {
		t.Fatal(err)
	}
	return send, recv
}

func TestCipherState_NonceLayout(t *testing.T) {
	send, _ := transportPair(t)
	key := noise.KeyForTest(send)
	block, _ := aes.NewCipher(key[:])
	gcm, _ := cipher.NewGCM(block)
	for n := uint64(0); n < 3; n++ {
		pt := []byte("record")
		got, err := send.Encrypt(nil, []byte("ad"), pt)
		if err != nil {
			t.Fatal(err)
		}
		var nonce [12]byte // 4 zero bytes ‖ u64be(n)
		binary.BigEndian.PutUint64(nonce[4:], n)
		if want := gcm.Seal(nil, nonce[:], pt, []byte("ad")); !bytes.Equal(got, want) {
			t.Fatalf("record %d = %x, want %x", n, got, want)
		}
		if len(got) != len(pt)+noise.TagLen {
			t.Fatalf("len = %d, want %d", len(got), len(pt)+noise.TagLen)
		}
	}
}

func TestTransport_RejectsTamperAndReplay(t *testing.T) {
	pt := []byte(`{"id":1,"method":"initialize"}`)
	send, _ := transportPair(t)
	ct, err := send.Encrypt(nil, nil, pt)
	if err != nil {
		t.Fatal(err)
	}
	for i := range ct {
		for _, bit := range []byte{0x01, 0x80} {
			// A fresh receiver per flip: after a failure the state is poisoned.
			s2, r2 := transportPair(t)
			good, _ := s2.Encrypt(nil, nil, pt)
			bad := bytes.Clone(good)
			bad[i] ^= bit
			if _, err := r2.Decrypt(nil, nil, bad); !errors.Is(err, noise.ErrDecrypt) {
				t.Fatalf("flip byte %d bit %#x: got %v, want ErrDecrypt", i, bit, err)
			}
			if _, err := r2.Decrypt(nil, nil, good); !errors.Is(err, noise.ErrPoisoned) {
				t.Fatalf("after failure: got %v, want ErrPoisoned", err)
			}
		}
	}
	// Replay: the second decrypt of the same record fails (the nonce moved on).
	s, r := transportPair(t)
	rec, _ := s.Encrypt(nil, nil, pt)
	if got, err := r.Decrypt(nil, nil, rec); err != nil || !bytes.Equal(got, pt) {
		t.Fatalf("first decrypt: %v", err)
	}
	if _, err := r.Decrypt(nil, nil, rec); !errors.Is(err, noise.ErrDecrypt) {
		t.Fatalf("replayed record: got %v, want ErrDecrypt", err)
	}
	// Truncated below the tag.
	s, r = transportPair(t)
	rec, _ = s.Encrypt(nil, nil, nil)
	if _, err := r.Decrypt(nil, nil, rec[:noise.TagLen-1]); !errors.Is(err, noise.ErrShortMessage) {
		t.Fatalf("short record: got %v, want ErrShortMessage", err)
	}
}

func TestCipherState_ExhaustionAndClear(t *testing.T) {
	send, recv := transportPair(t)
	noise.SetNonceForTest(send, noise.MaxNonce-1)
	if _, err := send.Encrypt(nil, nil, []byte("last")); err != nil {
		t.Fatalf("nonce MaxNonce-1: %v", err)
	}
	if _, err := send.Encrypt(nil, nil, []byte("x")); !errors.Is(err, noise.ErrNonceExhausted) {
		t.Fatalf("nonce MaxNonce: got %v, want ErrNonceExhausted", err)
	}
	if _, err := send.Encrypt(nil, nil, []byte("x")); !errors.Is(err, noise.ErrPoisoned) {
		t.Fatalf("after exhaustion: got %v, want ErrPoisoned", err)
	}
	recv.Clear()
	if k := noise.KeyForTest(recv); k != [noise.KeyLen]byte{} {
		t.Fatal("Clear left key bytes")
	}
	if _, err := recv.Decrypt(nil, nil, make([]byte, 32)); !errors.Is(err, noise.ErrCleared) {
		t.Fatalf("after Clear: got %v, want ErrCleared", err)
	}
	recv.Clear() // idempotent
}

func TestCipherState_EncryptAllocs(t *testing.T) {
	send, _ := transportPair(t)
	pt := make([]byte, 1024)
	buf := make([]byte, 0, len(pt)+noise.TagLen)
	allocs := testing.AllocsPerRun(100, func() {
		if _, err := send.Encrypt(buf[:0], nil, pt); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Fatalf("Encrypt allocs = %v, want 0", allocs)
	}
}
