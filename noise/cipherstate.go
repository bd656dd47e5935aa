package noise

import (
	"crypto/aes"
	"crypto/cipher"
	"encoding/binary"
	"fmt"
)

// CipherState is one direction of AES-256-GCM with an implicit nonce (Noise §5.1;
// spec/relay-noise.md §5.2, §7):
//
//	nonce = 00 00 00 00 ‖ u64be(n)        n = 0, 1, 2, …  (never MaxNonce)
//	record = AES-256-GCM(k, nonce, ad, plaintext) = ciphertext ‖ tag(16)
//
// The counter advances on every successful Encrypt or Decrypt, so records must be
// decrypted exactly once and in order. A failed Decrypt, an exhausted counter or use
// after Clear poisons the state: every later call fails. Not safe for concurrent use.
type CipherState struct {
	aead cipher.AEAD // nil after Clear; guarded by the caller
	key  [KeyLen]byte
	n    uint64
	err  error // first failure; sticky

	// nonce is scratch for the GCM nonce; kept here because a stack array passed to the
	// AEAD interface escapes and would cost an allocation per record.
	nonce [NonceLen]byte
}

// newCipherState keys a CipherState; the caller zeroes its own copy of k.
func newCipherState(k *[KeyLen]byte) *CipherState {
	cs := &CipherState{key: *k}
	block, err := aes.NewCipher(cs.key[:])
	if err != nil { // unreachable: the key length is fixed
		cs.err = fmt.Errorf("creating AES cipher: %w", err)
		return cs
	}
	aead, err := cipher.NewGCM(block)
	if err != nil { // unreachable: standard nonce and tag sizes
		cs.err = fmt.Errorf("creating GCM: %w", err)
		return cs
	}
	cs.aead = aead
	return cs
}

// Nonce returns the next counter value, i.e. how many records this state has
// processed.
func (cs *CipherState) Nonce() uint64 { return cs.n }

// Encrypt appends the encryption of plaintext with associated data ad to out and returns
// the extended slice (len(plaintext)+TagLen bytes are added). out and plaintext may
// overlap only if out[len(out):] is exactly plaintext, as with cipher.AEAD.Seal.
func (cs *CipherState) Encrypt(out, ad, plaintext []byte) ([]byte, error) {
	if err := cs.usable(); err != nil {
		return out, err
	}
	binary.BigEndian.PutUint64(cs.nonce[4:], cs.n)
	cs.n++
	return cs.aead.Seal(out, cs.nonce[:], plaintext, ad), nil
}

// Decrypt authenticates ciphertext with associated data ad and appends the plaintext to
// out. A tag failure returns an error wrapping ErrDecrypt and poisons the state; the
// counter does not advance, but the state is unusable from then on. The appended region
// of out is unspecified on failure.
func (cs *CipherState) Decrypt(out, ad, ciphertext []byte) ([]byte, error) {
	if err := cs.usable(); err != nil {
		return out, err
	}
	if len(ciphertext) < TagLen {
		cs.err = ErrShortMessage
		return out, cs.err
	}
	binary.BigEndian.PutUint64(cs.nonce[4:], cs.n)
	res, err := cs.aead.Open(out, cs.nonce[:], ciphertext, ad)
	if err != nil {
		cs.err = ErrDecrypt
		return out, cs.err
	}
	cs.n++
	return res, nil
}

// Clear zeroes the key and drops the cipher; every later call fails with ErrCleared.
// Safe to call more than once.
func (cs *CipherState) Clear() {
	clear(cs.key[:])
	cs.aead = nil
	if cs.err == nil {
		cs.err = ErrCleared
	}
}

// Err returns the failure that poisoned the state, or nil.
func (cs *CipherState) Err() error { return cs.err }

func (cs *CipherState) usable() error {
	if cs.err != nil {
		if cs.err == ErrCleared {
			return ErrCleared
		}
		return poisoned(cs.err)
	}
	if cs.n == MaxNonce {
		cs.err = ErrNonceExhausted
		return cs.err
	}
	return nil
}

// setNonceForTest moves the counter; used by the exhaustion test only.
func (cs *CipherState) setNonceForTest(n uint64) { cs.n = n }
