package noise

import "slices"

// Protocol flow (spec/relay-noise.md §5.6, §5.7):
//
//	initiator (harness)                              responder (executor)
//	  <- s  (pre-message: responder X25519 pub, ML-KEM pub mixed into h)
//	  -> skem, e, es, s, ss, payload(authorization)      message 1, 3568+n B
//	  <- ekem, skem, e, ee, se, payload(empty|marker)    message 2, 3424+p B
//	Split: k1 initiator→responder, k2 responder→initiator
//
// Message 1 layout:
//
//	off    len   token
//	0      1088  skem  ML-KEM ct to responder static; clear (no key yet)
//	1088   32    e     initiator ephemeral X25519 public (clear)
//	1120   1184  e     initiator ephemeral ML-KEM public (clear)
//	2304   48    s     initiator static X25519 public, encrypted
//	2352   1200  s     initiator static ML-KEM public, encrypted
//	3552   n+16  payload
//
// Message 2 layout:
//
//	off    len   token
//	0      1088  ekem  ML-KEM ct to initiator ephemeral (clear)
//	1088   1104  skem  ML-KEM ct to initiator static, encrypted
//	2192   32    e     responder ephemeral X25519 public (clear)
//	2224   1184  e     responder ephemeral ML-KEM public (clear; never used by KEM, so a
//	                   random valid key encoding, ephemeral.go)
//	3408   p+16  payload

const (
	m1SkemEnd = KEMCiphertextLen
	m1EXEnd   = m1SkemEnd + DHLen
	m1EKEMEnd = m1EXEnd + KEMPublicKeyLen
	m1SXEnd   = m1EKEMEnd + DHLen + TagLen
	m1SKEMEnd = m1SXEnd + KEMPublicKeyLen + TagLen
	m2EkemEnd = KEMCiphertextLen
	m2SkemEnd = m2EkemEnd + KEMCiphertextLen + TagLen
	m2EXEnd   = m2SkemEnd + DHLen
	m2EKEMEnd = m2EXEnd + KEMPublicKeyLen
	_         = uint(m1SKEMEnd+TagLen-Message1Overhead) + uint(Message1Overhead-m1SKEMEnd-TagLen) // layout == overhead
	_         = uint(m2EKEMEnd+TagLen-Message2Overhead) + uint(Message2Overhead-m2EKEMEnd-TagLen)
)

func (hs *HandshakeState) writeMessage1(out, payload []byte) ([]byte, error) {
	if len(payload) > MaxMessage1Payload {
		return out, ErrHandshakePayloadTooLarge
	}
	// One allocation for the whole message (callers pass nil: noise/channel), not one per
	// token as appends would grow it.
	out = slices.Grow(out, Message1Overhead+len(payload))
	// skem: encapsulate to the responder's static ML-KEM key; clear, then
	// MixKeyAndHash(ss).
	defer clear(hs.kemSS[:])
	if err := encapsulate(&hs.kemCT, &hs.kemSS, hs.rsKEM, &hs.kemM, hs.rand); err != nil {
		return out, err
	}
	out, err := hs.ss.encryptAndHash(out, hs.kemCT[:])
	if err != nil {
		return out, err
	}
	hs.ss.mixKeyAndHash(hs.kemSS[:])
	// e
	ekem, err := hs.generateEphemeral()
	if err != nil {
		return out, err
	}
	ek := (*[KEMPublicKeyLen]byte)(hs.scratch[:KEMPublicKeyLen])
	packKEM(ek, ekem)
	hs.ss.mixHash(hs.exPub[:])
	hs.ss.mixHash(ek[:])
	out = append(append(out, hs.exPub[:]...), ek[:]...)
	// es
	if err := hs.mixDHRemoteStatic(); err != nil {
		return out, err
	}
	// s
	if out, err = hs.ss.encryptAndHash(out, hs.s.pub.X25519[:]); err != nil {
		return out, err
	}
	if out, err = hs.ss.encryptAndHash(out, hs.s.pub.MLKEM768[:]); err != nil {
		return out, err
	}
	// ss (the responder's key is pinned: it enters the peer cache at once)
	if err := hs.mixSS(); err != nil {
		return out, err
	}
	hs.rememberPeer()
	return hs.ss.encryptAndHash(out, payload)
}

func (hs *HandshakeState) readMessage1(out, msg []byte) ([]byte, error) {
	if len(msg) > MaxMessageLen {
		return out, ErrHandshakeRequestTooLarge
	}
	if len(msg) < Message1Overhead {
		return out, ErrShortMessage
	}
	// skem
	ct := msg[:m1SkemEnd]
	if _, err := hs.ss.decryptAndHash(hs.scratch[:0], ct); err != nil {
		return out, err
	}
	defer clear(hs.kemSS[:])
	if err := decapsulate(&hs.kemSS, hs.s.kem, ct); err != nil {
		return out, err
	}
	hs.ss.mixKeyAndHash(hs.kemSS[:])
	// e
	copy(hs.reX[:], msg[m1SkemEnd:m1EXEnd])
	var err error
	if hs.reKEM, err = parseKEM(msg[m1EXEnd:m1EKEMEnd]); err != nil {
		return out, err
	}
	hs.ss.mixHash(msg[m1SkemEnd:m1EXEnd])
	hs.ss.mixHash(msg[m1EXEnd:m1EKEMEnd])
	// es
	if err := hs.mixDH(&hs.s.x, &hs.reX); err != nil {
		return out, err
	}
	// s (decrypted in place into hs.rs, which PeerStatic shows only once hasRS is set)
	if _, err := hs.ss.decryptAndHash(hs.rs.X25519[:0], msg[m1EKEMEnd:m1SXEnd]); err != nil {
		return out, err
	}
	if _, err := hs.ss.decryptAndHash(hs.rs.MLKEM768[:0], msg[m1SXEnd:m1SKEMEnd]); err != nil {
		return out, err
	}
	if err := hs.useRemoteStatic(&hs.rs); err != nil {
		return out, err
	}
	// ss
	if err := hs.mixSS(); err != nil {
		return out, err
	}
	if out, err = hs.ss.decryptAndHash(out, msg[m1SKEMEnd:]); err != nil {
		return out, err
	}
	// The payload opened under keys ss went into: the initiator holds rs's private
	// key, so rs may enter the peer cache.
	hs.rememberPeer()
	return out, nil
}

func (hs *HandshakeState) writeMessage2(out, payload []byte) ([]byte, error) {
	if len(payload) > MaxMessage2Payload {
		return out, ErrHandshakePayloadTooLarge
	}
	// One allocation for the whole message (callers pass nil: noise/channel), not one per
	// token as appends would grow it.
	out = slices.Grow(out, Message2Overhead+len(payload))
	// ekem: encapsulate to the initiator's ephemeral ML-KEM key; clear; MixKey(ss).
	defer clear(hs.kemSS[:])
	if err := encapsulate(&hs.kemCT, &hs.kemSS, hs.reKEM, &hs.kemM, hs.rand); err != nil {
		return out, err
	}
	hs.ss.mixHash(hs.kemCT[:])
	out = append(out, hs.kemCT[:]...)
	hs.ss.mixKey(hs.kemSS[:])
	// skem: encapsulate to the initiator's static ML-KEM key; encrypted;
	// MixKeyAndHash(ss).
	if err := encapsulate(&hs.kemCT, &hs.kemSS, hs.rsKEM, &hs.kemM, hs.rand); err != nil {
		return out, err
	}
	out, err := hs.ss.encryptAndHash(out, hs.kemCT[:])
	if err != nil {
		return out, err
	}
	hs.ss.mixKeyAndHash(hs.kemSS[:])
	// e: the ML-KEM half is a random key encoding, never a key pair (ephemeral.go).
	ek := (*[KEMPublicKeyLen]byte)(hs.scratch[:KEMPublicKeyLen])
	if err := hs.generateResponderEphemeral(ek); err != nil {
		return out, err
	}
	hs.ss.mixHash(hs.exPub[:])
	hs.ss.mixHash(ek[:])
	out = append(append(out, hs.exPub[:]...), ek[:]...)
	// ee
	if err := hs.mixDH(&hs.ex, &hs.reX); err != nil {
		return out, err
	}
	// se (responder side: DH(e, rs))
	if err := hs.mixDHRemoteStatic(); err != nil {
		return out, err
	}
	return hs.ss.encryptAndHash(out, payload)
}

func (hs *HandshakeState) readMessage2(out, msg []byte) ([]byte, error) {
	if len(msg) > MaxMessageLen {
		return out, ErrHandshakeResponseTooLarge
	}
	if len(msg) < Message2Overhead {
		return out, ErrShortMessage
	}
	// ekem
	ct := msg[:m2EkemEnd]
	hs.ss.mixHash(ct)
	defer clear(hs.kemSS[:])
	if err := decapsulate(&hs.kemSS, hs.ekem, ct); err != nil {
		return out, err
	}
	hs.ss.mixKey(hs.kemSS[:])
	// skem
	ct2, err := hs.ss.decryptAndHash(hs.scratch[:0], msg[m2EkemEnd:m2SkemEnd])
	if err != nil {
		return out, err
	}
	if err := decapsulate(&hs.kemSS, hs.s.kem, ct2); err != nil {
		return out, err
	}
	hs.ss.mixKeyAndHash(hs.kemSS[:])
	// e
	copy(hs.reX[:], msg[m2SkemEnd:m2EXEnd])
	// The responder's ephemeral ML-KEM key is only hashed, never parsed: no KEM uses it.
	hs.ss.mixHash(msg[m2SkemEnd:m2EXEnd])
	hs.ss.mixHash(msg[m2EXEnd:m2EKEMEnd])
	// ee
	if err := hs.mixDH(&hs.ex, &hs.reX); err != nil {
		return out, err
	}
	// se (initiator side: DH(s, re))
	if err := hs.mixDH(&hs.s.x, &hs.reX); err != nil {
		return out, err
	}
	return hs.ss.decryptAndHash(out, msg[m2EKEMEnd:])
}
