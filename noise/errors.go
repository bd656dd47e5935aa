package noise

import "errors"

// Sentinel errors. Texts that the reference also produces are copied verbatim from
// spec/relay-noise.md §5.8 so logs of both implementations read alike.
var (
	// ErrHandshakeRequestTooLarge: the responder read a message 1 over MaxMessageLen.
	ErrHandshakeRequestTooLarge = errors.New("handshake request is too large")
	// ErrHandshakeResponseTooLarge: the initiator read a message 2 over MaxMessageLen.
	ErrHandshakeResponseTooLarge = errors.New("handshake response is too large")
	// ErrHandshakePayloadTooLarge: a payload would push a handshake message over
	// MaxMessageLen.
	ErrHandshakePayloadTooLarge = errors.New("handshake payload is too large")
	// ErrMissingInitiatorStatic: the initiator's static key was asked for before message 1
	// was read.
	ErrMissingInitiatorStatic = errors.New("handshake request is missing initiator static key")

	// ErrShortMessage: a handshake message is shorter than its fixed part, or a transport
	// ciphertext is shorter than its tag.
	ErrShortMessage = errors.New("noise: message is too short")
	// ErrDecrypt: an AEAD tag did not verify (tampering, wrong key, wrong prologue or
	// replay). It poisons the state that produced it.
	ErrDecrypt = errors.New("noise: decryption failed")
	// ErrInvalidKey: a peer's public key or DH result was rejected (wrong length, invalid
	// ML-KEM encoding, low-order X25519 point).
	ErrInvalidKey = errors.New("noise: invalid public key")
	// ErrNonceExhausted: the CipherState counter reached MaxNonce.
	ErrNonceExhausted = errors.New("noise: nonce exhausted")
	// ErrPoisoned wraps every error returned after a state has failed once.
	ErrPoisoned = errors.New("noise: state failed earlier")
	// ErrWrongTurn: a handshake method was called out of order or after completion.
	ErrWrongTurn = errors.New("noise: handshake method called out of turn")
	// ErrCleared: the state was cleared and holds no keys any more.
	ErrCleared = errors.New("noise: state has been cleared")
	// ErrConfig: Config is missing a required field.
	ErrConfig = errors.New("noise: invalid config")
)

// poisonedError reports a call on a state that failed earlier; it matches both
// ErrPoisoned and the original failure with errors.Is.
type poisonedError struct{ first error }

func (e *poisonedError) Error() string   { return ErrPoisoned.Error() + ": " + e.first.Error() }
func (e *poisonedError) Unwrap() []error { return []error{ErrPoisoned, e.first} }

func poisoned(first error) error { return &poisonedError{first: first} }
