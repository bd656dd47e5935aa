package frame

import (
	"errors"
	"fmt"
	"strconv"

	"google.golang.org/protobuf/encoding/protowire"
)

// Decode errors. Their texts never echo frame contents.
var (
	// ErrMalformed wraps every protobuf decoding failure: "invalid relay message frame: <why>"
	// (spec/relay-noise.md §3 check 0). The executor drops such a message and keeps the socket;
	// a harness closes.
	ErrMalformed = errors.New("invalid relay message frame")

	// ErrMessageTooLarge reports a message over MaxMessageSize, from Decode or Encode. On
	// receipt the reference treats it as a socket read error and drops the socket.
	ErrMessageTooLarge = errors.New("relay: websocket message exceeds 256 KiB")

	// ErrNonBinary is wrapped by a frame connection's read error when it read and dropped one
	// non-binary (text) websocket message: such a message carries no frame, and the
	// connection stays usable (spec/relay-noise.md §12.1: "dropping non-binary Noise relay
	// frame from harness"). relay/wsconn and relay/relaytest produce it; relay/mux, the
	// rendezvous and the harness branch on it with errors.Is. It lives here, the one relay
	// package every user of a frame connection already imports.
	ErrNonBinary = errors.New("relay: non-binary websocket message")
)

// Validation errors, with the reference's exact texts (spec/relay-noise.md §3). A version
// mismatch is a *VersionError, which matches ErrUnsupportedVersion under errors.Is.
var (
	ErrUnsupportedVersion      = errors.New("unsupported relay message frame version")
	ErrMissingStreamID         = errors.New("relay message frame is missing stream_id")
	ErrDataMissingFields       = errors.New("relay data message frame is missing required fields")
	ErrResetMissingReason      = errors.New("relay reset message frame is missing reason")
	ErrHandshakeMissingPayload = errors.New("relay handshake message frame is missing payload")
	ErrMissingBody             = errors.New("relay message frame is missing body")

	// ErrStreamIDTooLong is our own rule (MaxStreamIDLen), checked right after the reference's
	// stream_id check; the reference has no such limit.
	ErrStreamIDTooLong = errors.New("relay message frame stream_id is too long")
)

// VersionError is check 1 of spec §3: "unsupported relay message frame version N".
type VersionError struct {
	Version uint32
}

func (e *VersionError) Error() string {
	return "unsupported relay message frame version " + strconv.FormatUint(uint64(e.Version), 10)
}

// Is makes errors.Is(err, ErrUnsupportedVersion) true.
func (e *VersionError) Is(target error) bool { return target == ErrUnsupportedVersion }

var errInvalidUTF8 = errors.New("string is not valid UTF-8")

// malformed wraps a decoding failure as "invalid relay message frame: <what>: <err>".
func malformed(what string, err error) error {
	return fmt.Errorf("%w: %s: %w", ErrMalformed, what, err)
}

func malformedType(name string, typ protowire.Type) error {
	return fmt.Errorf("%w: reading %s: unexpected wire type %d", ErrMalformed, name, typ)
}
