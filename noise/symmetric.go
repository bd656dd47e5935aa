package noise

import (
	"crypto/sha256"
	"encoding/binary"
	"hash"
)

// symmetricState is the Noise SymmetricState (Noise §5.2) for SHA-256 and AES-256-GCM.
// It is only used during the handshake; Split hands its chaining key to two
// CipherStates and the handshake clears it.
//
// Cost (issue 16): one SHA-256 digest serves every MixHash and HMAC of the handshake,
// with its pads and outputs in the fields below, so hashing allocates nothing; and a
// key from MixKey gets its AES-GCM instance only when a message is sealed or opened
// with it (four of the responder's seven keys are; the other three are replaced unused).
type symmetricState struct {
	ck [HashLen]byte
	h  [HashLen]byte

	key    [KeyLen]byte // k; valid when hasKey
	hasKey bool
	k      *CipherState // k's cipher, built on first use (cipher); nil until then

	d hash.Hash // SHA-256, reset before every use; nil until the first

	// Scratch for hmac and hkdf; heap-resident with the state so that passing them to
	// d.Write does not allocate. Zeroed after each use when secret.
	pad   [sha256.BlockSize]byte
	inner [HashLen]byte
	temp  [HashLen]byte
	outs  [3][HashLen]byte
	ctr   [1]byte
	prevH [HashLen]byte // h before the last decryptAndHash: that record's associated data
}

// initialize sets h = ck = SHA-256(ProtocolName); the name is longer than HashLen, so it
// is hashed rather than padded.
func (ss *symmetricState) initialize() {
	ss.h = sha256.Sum256([]byte(ProtocolName))
	ss.ck = ss.h
	ss.d = sha256.New()
}

// mixHash: h = SHA-256(h ‖ data).
func (ss *symmetricState) mixHash(data []byte) {
	ss.d.Reset()
	ss.d.Write(ss.h[:])
	ss.d.Write(data)
	ss.d.Sum(ss.h[:0])
}

// hmac sets out = HMAC-SHA256(key, a ‖ b) (RFC 2104); key is exactly HashLen bytes (every
// HMAC key of the handshake is a chaining key or an HKDF temp key). out must not alias a
// or b. The pads are built a word at a time: the key's 32 bytes XOR the pad byte, the
// block's other 32 bytes are the pad byte itself.
func (ss *symmetricState) hmac(out *[HashLen]byte, key *[HashLen]byte, a, b []byte) {
	const ipad, opad = 0x3636363636363636, 0x5c5c5c5c5c5c5c5c
	setPad(&ss.pad, key, ipad)
	ss.d.Reset()
	ss.d.Write(ss.pad[:])
	ss.d.Write(a)
	ss.d.Write(b)
	ss.d.Sum(ss.inner[:0])
	setPad(&ss.pad, key, opad)
	ss.d.Reset()
	ss.d.Write(ss.pad[:])
	ss.d.Write(ss.inner[:])
	ss.d.Sum(out[:0])
	clear(ss.pad[:])
	clear(ss.inner[:])
}

// setPad sets pad = (key ‖ 0³²) XOR the pad byte repeated (p holds it in every byte).
func setPad(pad *[sha256.BlockSize]byte, key *[HashLen]byte, p uint64) {
	for i := 0; i < HashLen; i += 8 {
		binary.LittleEndian.PutUint64(pad[i:], binary.LittleEndian.Uint64(key[i:])^p)
	}
	for i := HashLen; i < sha256.BlockSize; i += 8 {
		binary.LittleEndian.PutUint64(pad[i:], p)
	}
}

// hkdf is the Noise HKDF (Noise §4.3): temp = HMAC(ck, ikm), out[0] = HMAC(temp, 0x01),
// out[i] = HMAC(temp, out[i-1] ‖ i+1), for n ≤ 3 outputs in ss.outs. It equals RFC 5869
// HKDF with salt ck and empty info (symmetric_test.go checks it against crypto/hkdf).
// The caller zeroes ss.outs after use.
func (ss *symmetricState) hkdf(ikm []byte, n int) {
	ss.hmac(&ss.temp, &ss.ck, ikm, nil)
	var prev []byte
	for i := range n {
		ss.ctr[0] = byte(i + 1)
		ss.hmac(&ss.outs[i], &ss.temp, prev, ss.ctr[:])
		prev = ss.outs[i][:]
	}
	clear(ss.temp[:])
}

// mixKey: ck, k = HKDF(ck, ikm); the cipher restarts at nonce 0.
func (ss *symmetricState) mixKey(ikm []byte) {
	ss.hkdf(ikm, 2)
	ss.ck = ss.outs[0]
	ss.setKey(&ss.outs[1])
	clear(ss.outs[:])
}

// mixKeyAndHash: ck, temp_h, k = HKDF(ck, ikm); MixHash(temp_h).
func (ss *symmetricState) mixKeyAndHash(ikm []byte) {
	ss.hkdf(ikm, 3)
	ss.ck = ss.outs[0]
	ss.mixHash(ss.outs[1][:])
	ss.setKey(&ss.outs[2])
	clear(ss.outs[:])
}

// setKey replaces k; the previous key's cipher, if it was built, is cleared.
func (ss *symmetricState) setKey(k *[KeyLen]byte) {
	if ss.k != nil {
		ss.k.Clear()
		ss.k = nil
	}
	ss.key, ss.hasKey = *k, true
}

// cipher returns k's CipherState, building it on first use.
func (ss *symmetricState) cipher() *CipherState {
	if ss.k == nil {
		ss.k = newCipherState(&ss.key)
	}
	return ss.k
}

// encryptAndHash appends EncryptWithAd(h, plaintext) to out (plaintext itself while no
// key is set) and mixes the appended bytes into h.
func (ss *symmetricState) encryptAndHash(out, plaintext []byte) ([]byte, error) {
	start := len(out)
	if !ss.hasKey {
		out = append(out, plaintext...)
	} else {
		var err error
		if out, err = ss.cipher().Encrypt(out, ss.h[:], plaintext); err != nil {
			return out[:start], err
		}
	}
	ss.mixHash(out[start:])
	return out, nil
}

// decryptAndHash appends the plaintext of ciphertext to out and mixes ciphertext into h.
// The next h is computed before decrypting, so out may overlap ciphertext.
func (ss *symmetricState) decryptAndHash(out, ciphertext []byte) ([]byte, error) {
	ss.prevH = ss.h
	ss.mixHash(ciphertext)
	if !ss.hasKey {
		return append(out, ciphertext...), nil
	}
	return ss.cipher().Decrypt(out, ss.prevH[:], ciphertext)
}

// split returns (c1, c2) = HKDF(ck, "") keyed CipherStates: c1 initiator→responder,
// c2 responder→initiator.
func (ss *symmetricState) split() (c1, c2 *CipherState) {
	ss.hkdf(nil, 2)
	c1, c2 = newCipherState(&ss.outs[0]), newCipherState(&ss.outs[1])
	clear(ss.outs[:])
	return c1, c2
}

func (ss *symmetricState) clear() {
	clear(ss.ck[:])
	clear(ss.h[:])
	clear(ss.prevH[:])
	clear(ss.key[:])
	ss.hasKey = false
	if ss.k != nil {
		ss.k.Clear()
		ss.k = nil
	}
	clear(ss.pad[:])
	clear(ss.inner[:])
	clear(ss.temp[:])
	clear(ss.outs[:])
	// The digest's own buffer may hold the tail of the last HMAC input; it cannot be
	// zeroed from outside crypto/sha256, so it is dropped.
	ss.d = nil
}
