package noise

import (
	"crypto/hkdf"
	"crypto/sha256"
	"fmt"
	"hash"
)

// symmetricState is the Noise SymmetricState (Noise §5.2) for SHA-256 and AES-256-GCM.
// It is only used during the handshake; Split hands its chaining key to two
// CipherStates and the handshake clears it.
type symmetricState struct {
	ck [HashLen]byte
	h  [HashLen]byte
	k  *CipherState // nil until the first MixKey
}

// initialize sets h = ck = SHA-256(ProtocolName); the name is longer than HashLen, so it
// is hashed rather than padded.
func (ss *symmetricState) initialize() {
	ss.h = sha256.Sum256([]byte(ProtocolName))
	ss.ck = ss.h
}

func (ss *symmetricState) mixHash(data ...[]byte) {
	d := sha256.New()
	d.Write(ss.h[:])
	for _, b := range data {
		d.Write(b)
	}
	d.Sum(ss.h[:0])
}

// hkdfN derives n HashLen outputs from ck and ikm with the Noise HKDF
// (HMAC-SHA256(temp, out[i-1] ‖ i)), which is RFC 5869 HKDF with salt ck and empty info.
func (ss *symmetricState) hkdfN(ikm []byte, n int) ([]byte, error) {
	out, err := hkdf.Key(func() hash.Hash { return sha256.New() }, ikm, ss.ck[:], "", n*HashLen)
	if err != nil {
		return nil, fmt.Errorf("deriving keys: %w", err)
	}
	return out, nil
}

// mixKey: ck, k = HKDF(ck, ikm); the cipher restarts at nonce 0.
func (ss *symmetricState) mixKey(ikm []byte) error {
	out, err := ss.hkdfN(ikm, 2)
	if err != nil {
		return err
	}
	defer clear(out)
	copy(ss.ck[:], out[:HashLen])
	ss.setKey((*[KeyLen]byte)(out[HashLen:]))
	return nil
}

// mixKeyAndHash: ck, temp_h, k = HKDF(ck, ikm); MixHash(temp_h).
func (ss *symmetricState) mixKeyAndHash(ikm []byte) error {
	out, err := ss.hkdfN(ikm, 3)
	if err != nil {
		return err
	}
	defer clear(out)
	copy(ss.ck[:], out[:HashLen])
	ss.mixHash(out[HashLen : 2*HashLen])
	ss.setKey((*[KeyLen]byte)(out[2*HashLen:]))
	return nil
}

func (ss *symmetricState) setKey(k *[KeyLen]byte) {
	if ss.k != nil {
		ss.k.Clear()
	}
	ss.k = newCipherState(k)
}

// encryptAndHash appends EncryptWithAd(h, plaintext) to out (plaintext itself while no
// key is set) and mixes the appended bytes into h.
func (ss *symmetricState) encryptAndHash(out, plaintext []byte) ([]byte, error) {
	start := len(out)
	if ss.k == nil {
		out = append(out, plaintext...)
	} else {
		var err error
		if out, err = ss.k.Encrypt(out, ss.h[:], plaintext); err != nil {
			return out[:start], err
		}
	}
	ss.mixHash(out[start:])
	return out, nil
}

// decryptAndHash appends the plaintext of ciphertext to out and mixes ciphertext into h.
// The next h is computed before decrypting, so out may overlap ciphertext.
func (ss *symmetricState) decryptAndHash(out, ciphertext []byte) ([]byte, error) {
	prev := ss.h
	ss.mixHash(ciphertext)
	if ss.k == nil {
		return append(out, ciphertext...), nil
	}
	return ss.k.Decrypt(out, prev[:], ciphertext)
}

// split returns (c1, c2) = HKDF(ck, "") keyed CipherStates: c1 initiator→responder,
// c2 responder→initiator.
func (ss *symmetricState) split() (c1, c2 *CipherState, err error) {
	out, err := ss.hkdfN(nil, 2)
	if err != nil {
		return nil, nil, err
	}
	defer clear(out)
	return newCipherState((*[KeyLen]byte)(out[:HashLen])), newCipherState((*[KeyLen]byte)(out[HashLen:])), nil
}

func (ss *symmetricState) clear() {
	clear(ss.ck[:])
	clear(ss.h[:])
	if ss.k != nil {
		ss.k.Clear()
		ss.k = nil
	}
}
