package channel

import (
	"errors"
)

// Sentinel errors. Texts starting "Noise relay" are the reference's
// (spec/relay-noise.md §8, §13) so logs of both implementations read alike.
var (
	// ErrReorderWindow: a record arrived more than ReorderWindow ahead of the next seq.
	ErrReorderWindow = errors.New("Noise relay ciphertext exceeds reorder window")
	// ErrPendingFull: buffering a record would exceed MaxPendingBytes.
	ErrPendingFull = errors.New("Noise relay pending ciphertext buffer is full")
	// ErrSeqExhausted: the send seq would wrap.
	ErrSeqExhausted = errors.New("Noise relay sequence number exhausted")
	// ErrDataBeforeHandshake: a record arrived before the handshake completed.
	ErrDataBeforeHandshake = errors.New("Noise relay received data before handshake completion")
	// ErrUnexpectedHandshake: the initiator received a handshake message after
	// completion (the responder ignores those, spec §12.1).
	ErrUnexpectedHandshake = errors.New("Noise relay received handshake after completion")

	// ErrRecordTooLarge: a record exceeds RecordPlaintextLen (or its ciphertext the Noise
	// message limit).
	ErrRecordTooLarge = errors.New("Noise relay record is too large")
	// ErrZeroLengthMessage: a length prefix of 0 was received, or WriteMessage was given
	// an empty message.
	ErrZeroLengthMessage = errors.New("Noise relay message length is zero")
	// ErrMessageTooLarge: a message (declared or given) exceeds MaxMessageLen.
	ErrMessageTooLarge = errors.New("Noise relay message is too large")

	// ErrAuthorizationTooLarge: message 1 carried more than MaxAuthorizationLen bytes.
	ErrAuthorizationTooLarge = errors.New("handshake authorization is too large")
	// ErrAuthorizationNotUTF8: message 1 carried an authorization that is not UTF-8.
	ErrAuthorizationNotUTF8 = errors.New("handshake authorization is not valid UTF-8")

	// ErrExecutorCredentialsRejected: the executor's registry credentials were rejected
	// (registry answered 401). Responder side: Authorize returns an error wrapping it to
	// make Responder send message 2 with RejectedPayload before failing. Initiator side:
	// Initiator returns it when message 2 carries RejectedPayload.
	ErrExecutorCredentialsRejected = errors.New("executor credentials rejected")
	// ErrResponsePayload: message 2 carried a payload other than empty or
	// RejectedPayload.
	ErrResponsePayload = errors.New("handshake response payload must be empty")

	// ErrClosed: the Conn was closed locally.
	ErrClosed = errors.New("channel: closed")
	// ErrConfig: a required config field is missing.
	ErrConfig = errors.New("channel: invalid config")
)

// AuthorizeError is returned by Responder when ResponderConfig.Authorize failed. Err is
// Authorize's error. RejectionSent reports whether message 2 with RejectedPayload was
// written (Authorize's error wrapped ErrExecutorCredentialsRejected and the write
// succeeded). Either way the caller should reset the stream.
type AuthorizeError struct {
	Err           error
	RejectionSent bool
}

func (e *AuthorizeError) Error() string { return "authorizing harness: " + e.Err.Error() }
func (e *AuthorizeError) Unwrap() error { return e.Err }
