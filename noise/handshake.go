package noise

import (
	"fmt"
	"io"
)

// Config configures one handshake. It is read, never mutated, and may be shared by
// concurrent handshakes.
type Config struct {
	// Initiator selects the role: true for the harness (sends message 1), false for the
	// executor.
	Initiator bool

	// Static is the local static identity. Required.
	Static *Identity

	// RemoteStatic is the responder's public key the initiator pins (IK). Required for
	// the initiator, ignored by the responder, which learns the initiator's key from
	// message 1. It is validated (ML-KEM encoding) by NewHandshake.
	RemoteStatic *PublicKey

	// Prologue is mixed into the transcript before any message; build it with
	// AppendPrologue. It is copied by nothing: the handshake hashes it in NewHandshake.
	Prologue []byte

	// Rand supplies all the handshake's randomness, ephemeral keys and ML-KEM
	// encapsulations; nil means crypto/rand. A deterministic Rand makes the transcript
	// deterministic (see the package doc).
	Rand io.Reader
}

type turn uint8

const (
	turnMessage1 turn = iota // initiator writes, responder reads
	turnMessage2             // responder writes, initiator reads
	turnSplit                // both: Split
	turnDone                 // split done or cleared
)

// HandshakeState runs one hybrid IK handshake (spec/relay-noise.md §5.5–§5.8).
//
// Initiator: WriteMessage (message 1), ReadMessage (message 2), Split.
// Responder: ReadMessage (message 1), [PeerStatic, authorize], WriteMessage
// (message 2), Split.
//
// Any error poisons the state; later calls return an error wrapping ErrPoisoned.
// Split clears the handshake's secrets. Not safe for concurrent use.
type HandshakeState struct {
	ss        symmetricState
	initiator bool
	turn      turn
	err       error // first failure; sticky

	s    *Identity
	rand io.Reader

	// Ephemeral X25519 of this side (private scalar, public key); the ML-KEM ephemeral
	// is needed only by the initiator (to decapsulate ekem).
	ex    dhKey
	exPub dhKey
	ekem  *kemDecapsulationKey

	rs      PublicKey // remote static; valid for the responder once message 1 is read
	hasRS   bool
	rsKEM   *kemEncapsulationKey
	rsTable *dhTable             // rs prepared for DH(e, rs) when the peer cache has it; nil otherwise
	reX     dhKey                // remote ephemeral X25519
	reKEM   *kemEncapsulationKey // remote ephemeral ML-KEM (initiator's, read by the responder)
	scratch [KEMPublicKeyLen + TagLen]byte

	// kemCT and kemSS hold one encapsulation's or decapsulation's output until it is
	// hashed and mixed; kept here so they need no allocation. kemSS is zeroed after use.
	kemCT [KEMCiphertextLen]byte
	kemSS [kemSharedLen]byte
	kemM  [kemEncapsulationSeedLen]byte // encapsulation randomness; zeroed after use
	dhOut dhKey                         // one DH result until mixed; zeroed after use
	// randBuf receives the random bytes of the responder's ML-KEM ephemeral (ephemeral.go).
	randBuf [kemRandFirst]byte

	ssVal    [DHLen]byte // DH(s, rs) between mixSS and rememberPeer (peercache.go)
	ssCached bool        // rs and ssVal came from the identity's peer cache
}

// NewHandshake starts a handshake: h = ck = SHA-256(ProtocolName), MixHash(prologue),
// then the IK pre-message `<- s`: MixHash(responder X25519 public), MixHash(responder
// ML-KEM public).
func NewHandshake(cfg *Config) (*HandshakeState, error) {
	if cfg == nil || cfg.Static == nil {
		return nil, fmt.Errorf("%w: Static identity is required", ErrConfig)
	}
	hs := &HandshakeState{initiator: cfg.Initiator, s: cfg.Static, rand: cfg.Rand}
	hs.ss.initialize()
	hs.ss.mixHash(cfg.Prologue)
	if cfg.Initiator {
		if cfg.RemoteStatic == nil {
			return nil, fmt.Errorf("%w: initiator needs RemoteStatic", ErrConfig)
		}
		if err := hs.useRemoteStatic(cfg.RemoteStatic); err != nil {
			return nil, err
		}
		hs.ss.mixHash(hs.rs.X25519[:])
		hs.ss.mixHash(hs.rs.MLKEM768[:])
	} else {
		hs.ss.mixHash(cfg.Static.pub.X25519[:])
		hs.ss.mixHash(cfg.Static.pub.MLKEM768[:])
	}
	return hs, nil
}

// WriteMessage appends the next handshake message carrying payload to out: message 1
// for the initiator, message 2 for the responder. payload is encrypted; on error out is
// returned unextended.
func (hs *HandshakeState) WriteMessage(out, payload []byte) ([]byte, error) {
	if err := hs.check(hs.writeTurn()); err != nil {
		return out, err
	}
	var res []byte
	var err error
	if hs.initiator {
		res, err = hs.writeMessage1(out, payload)
	} else {
		res, err = hs.writeMessage2(out, payload)
	}
	if err != nil {
		hs.fail(err)
		return out, err
	}
	hs.turn++
	return res, nil
}

// ReadMessage consumes the next handshake message and appends its decrypted payload to
// out: message 1 for the responder, message 2 for the initiator. out may overlap
// message only if out[len(out):] starts at message's first byte.
func (hs *HandshakeState) ReadMessage(out, message []byte) ([]byte, error) {
	if err := hs.check(hs.readTurn()); err != nil {
		return out, err
	}
	var res []byte
	var err error
	if hs.initiator {
		res, err = hs.readMessage2(out, message)
	} else {
		res, err = hs.readMessage1(out, message)
	}
	if err != nil {
		hs.fail(err)
		return out, err
	}
	hs.turn++
	return res, nil
}

// Complete reports whether both messages have been processed and Split may be called.
func (hs *HandshakeState) Complete() bool { return hs.err == nil && hs.turn == turnSplit }

// PeerStatic returns the remote static key: the pinned responder key for the initiator;
// for the responder, the initiator's authenticated key once message 1 is read, otherwise
// ErrMissingInitiatorStatic.
func (hs *HandshakeState) PeerStatic() (PublicKey, error) {
	if !hs.hasRS {
		return PublicKey{}, ErrMissingInitiatorStatic
	}
	return hs.rs, nil
}

// HandshakeHash returns the current transcript hash h (channel binding once complete).
func (hs *HandshakeState) HandshakeHash() [HashLen]byte { return hs.ss.h }

// Split finishes the handshake and returns the transport states oriented for this side:
// send encrypts toward the peer, recv decrypts from it. For the initiator send = k1
// (harness→executor); for the responder send = k2 (executor→harness). Split clears the
// handshake's secrets; the HandshakeState cannot be used afterwards.
func (hs *HandshakeState) Split() (send, recv *CipherState, err error) {
	if err := hs.check(turnSplit); err != nil {
		return nil, nil, err
	}
	c1, c2 := hs.ss.split()
	hs.Clear()
	if hs.initiator {
		return c1, c2, nil
	}
	return c2, c1, nil
}

// Clear zeroes the transcript and the ephemeral keys and drops the references to parsed
// keys. Later calls fail with ErrCleared. Safe to call more than once and after Split.
func (hs *HandshakeState) Clear() {
	hs.clearSecrets()
	hs.reX, hs.reKEM, hs.rsTable = dhKey{}, nil, nil
	clear(hs.scratch[:])
	clear(hs.kemCT[:])
	hs.turn = turnDone
	if hs.err == nil {
		hs.err = ErrCleared
	}
}

func (hs *HandshakeState) writeTurn() turn {
	if hs.initiator {
		return turnMessage1
	}
	return turnMessage2
}

func (hs *HandshakeState) readTurn() turn {
	if hs.initiator {
		return turnMessage2
	}
	return turnMessage1
}

func (hs *HandshakeState) check(want turn) error {
	if hs.err != nil {
		if hs.err == ErrCleared {
			return ErrCleared
		}
		return poisoned(hs.err)
	}
	if hs.turn != want {
		return ErrWrongTurn
	}
	return nil
}

// fail poisons the state and drops its secrets; the first error wins.
func (hs *HandshakeState) fail(err error) {
	hs.clearSecrets()
	hs.err = err
}

// clearSecrets zeroes the transcript, the ephemeral private keys and the last KEM
// secret. The initiator's ephemeral ML-KEM key is zeroed as a value (its seed z and
// H(ek)) and dropped: its expanded secret vector sits behind a pointer inside circl
// that this package cannot reach, so the garbage collector reclaims it unzeroed.
func (hs *HandshakeState) clearSecrets() {
	hs.ss.clear()
	clear(hs.ex[:])
	clear(hs.kemSS[:])
	clear(hs.ssVal[:])
	if hs.ekem != nil {
		*hs.ekem = kemDecapsulationKey{}
		hs.ekem = nil
	}
}

func (hs *HandshakeState) setRemoteStatic(pk *PublicKey) error {
	kem, err := parseKEM(pk.MLKEM768[:])
	if err != nil {
		return fmt.Errorf("parsing remote ML-KEM-768 static key: %w", ErrInvalidKey)
	}
	hs.rs, hs.hasRS, hs.rsKEM = *pk, true, kem
	return nil
}

// generateEphemeral creates the initiator's hybrid ephemeral from hs.rand: 32 bytes of
// X25519 private key, then the 64-byte ML-KEM-768 seed. It returns the ML-KEM public
// key.
func (hs *HandshakeState) generateEphemeral() (*kemEncapsulationKey, error) {
	var buf [ephemeralRandLen]byte
	defer clear(buf[:])
	if err := readRand(hs.rand, buf[:]); err != nil {
		return nil, fmt.Errorf("generating ephemeral key: %w", err)
	}
	copy(hs.ex[:], buf[:DHLen])
	dhPublicKey(&hs.exPub, &hs.ex)
	dk, ek, err := newKEMKeyPair(buf[DHLen:])
	if err != nil {
		return nil, fmt.Errorf("generating ephemeral key: %w", err)
	}
	hs.ekem = dk
	return ek, nil
}

// mixDHRemoteStatic performs MixKey(DH(e, rs)), the initiator's es and the responder's
// se: through rs's table when the peer cache has one (the same secret, a third of the
// cost), else the ladder.
func (hs *HandshakeState) mixDHRemoteStatic() error {
	if hs.rsTable == nil {
		return hs.mixDH(&hs.ex, (*dhKey)(&hs.rs.X25519))
	}
	defer clear(hs.dhOut[:])
	if err := hs.rsTable.dh(&hs.dhOut, &hs.ex); err != nil {
		return err
	}
	hs.ss.mixKey(hs.dhOut[:])
	return nil
}

// mixDH performs MixKey(DH(priv, pub)). An all-zero result (low-order peer point) is an
// error wrapping ErrInvalidKey, which fails the handshake (primitives.go).
func (hs *HandshakeState) mixDH(priv, pub *dhKey) error {
	defer clear(hs.dhOut[:])
	if err := dh(&hs.dhOut, priv, pub); err != nil {
		return err
	}
	hs.ss.mixKey(hs.dhOut[:])
	return nil
}
