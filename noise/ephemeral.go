package noise

import (
	"fmt"
	"io"
)

// The responder's ML-KEM ephemeral (message 2, token e) is hashed into the transcript and
// sent, but no KEM ever encapsulates to it: the protocol has no third message
// (spec/relay-noise.md §5.7). Generating a real key pair for it (an ML-KEM KeyGen, about
// a tenth of the responder's handshake CPU) would be work nobody uses. The responder
// sends instead a uniformly random valid encoding of an encapsulation key: 768
// coefficients uniform in [0, q) by rejection sampling, encoded as FIPS 203 ByteEncode12,
// then a random 32-byte ρ. It passes every parser's modulus check, and it has the
// distribution a real key has under the MLWE assumption that ML-KEM rests on (t̂ = Âŝ + ê
// is indistinguishable from uniform), so no observer can tell the two apart. The
// initiator's ephemeral is a real key pair: the responder encapsulates to it.

const (
	// kemQ is the ML-KEM modulus q (FIPS 203).
	kemQ = 3329
	// kemCoefficients is k·n = 3·256 coefficients of an ML-KEM-768 t̂.
	kemCoefficients = 3 * 256
	// kemRhoLen is ρ, the seed of Â, at the end of an encapsulation key.
	kemRhoLen = 32
	// kemRandBlock is how many random bytes one rejection-sampling round reads: 168
	// triples, 336 candidate coefficients. Three rounds suffice with overwhelming
	// probability (81 % of candidates are accepted).
	kemRandBlock = 504
	// kemRandFirst is the first read: three blocks, which suffice but for about 1 in 10⁵.
	kemRandFirst = 3 * kemRandBlock
)

var _ = [1]struct{}{}[kemCoefficients/2*3+kemRhoLen-KEMPublicKeyLen] // the layout is the key

// generateResponderEphemeral creates the responder's ephemeral from hs.rand: an X25519
// key pair, and the random ML-KEM encapsulation key encoding ek (see the file comment).
func (hs *HandshakeState) generateResponderEphemeral(ek *[KEMPublicKeyLen]byte) error {
	if err := readRand(hs.rand, hs.ex[:]); err != nil {
		return fmt.Errorf("generating ephemeral key: %w", err)
	}
	dhPublicKey(&hs.exPub, &hs.ex)
	return fillRandomKEMPublicKey(hs.rand, ek, &hs.randBuf)
}

// fillRandomKEMPublicKey fills dst (KEMPublicKeyLen bytes) with a uniformly random
// valid ML-KEM-768 encapsulation key encoding drawn from r (see the file comment); buf
// receives the random blocks (the caller's, so that nothing is allocated) and is zeroed.
//
// It reads kemRandFirst bytes (three blocks) at once, which suffice unless fewer than 768
// of their 1008 candidates are below q (about 1 in 10⁵), then one block at a time: the
// same bytes, in the same order, as reading block by block, so a deterministic r yields
// the same key either way (kat_test.go).
func fillRandomKEMPublicKey(r io.Reader, dst *[KEMPublicKeyLen]byte, buf *[kemRandFirst]byte) error {
	// Two spare slots: a rejected candidate is stored anyway and overwritten by the next.
	var coeffs [kemCoefficients + 2]uint16
	defer clear(buf[:])
	n := 0
	for chunk := buf[:]; n < kemCoefficients; chunk = buf[:kemRandBlock] {
		if err := readRand(r, chunk); err != nil {
			return fmt.Errorf("generating ephemeral key: %w", err)
		}
		// Two 12-bit candidates per 3 bytes, as FIPS 203 SampleNTT reads them; stored
		// without branching, kept by advancing n only when below q (the acceptance of a
		// uniform candidate is a coin the branch predictor cannot learn).
		for i := 0; i+3 <= len(chunk) && n < kemCoefficients; i += 3 {
			d1 := uint16(chunk[i]) | uint16(chunk[i+1]&0x0f)<<8
			d2 := uint16(chunk[i+1])>>4 | uint16(chunk[i+2])<<4
			coeffs[n] = d1
			n += int((uint32(d1) - kemQ) >> 31)
			coeffs[n] = d2
			n += int((uint32(d2) - kemQ) >> 31)
		}
	}
	// n may be kemCoefficients+1 when the last pair was accepted whole; the extra one is
	// past the key and dropped, as the reference loop's `n < 768` check drops it.
	// ByteEncode12: coefficient pairs (a, b) → a[0:8], a[8:12] | b[0:4]<<4, b[4:12].
	for i := 0; i < kemCoefficients; i += 2 {
		a, b := coeffs[i], coeffs[i+1]
		o := i / 2 * 3
		dst[o] = byte(a)
		dst[o+1] = byte(a>>8) | byte(b<<4)
		dst[o+2] = byte(b >> 4)
	}
	clear(coeffs[:])
	if err := readRand(r, dst[kemCoefficients/2*3:]); err != nil {
		return fmt.Errorf("generating ephemeral key: %w", err)
	}
	return nil
}
