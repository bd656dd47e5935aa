package initiator

import "errors"

// Initiator-side relay errors (spec/relay-noise.md §13, the reference's texts).
var (
	// ErrStreamReset: the executor (or the rendezvous for it) reset this stream. The peer's
	// reason is unauthenticated and discarded.
	ErrStreamReset = errors.New("Noise relay stream reset") //lint:ignore ST1005 the reference's text
	// errTextFrame: a text websocket message arrived on the relay socket.
	errTextFrame = errors.New("Noise relay transport expects binary protobuf frames")
	// errHandshakeInTransport: a handshake frame after the handshake completed.
	errHandshakeInTransport = errors.New("Noise relay received a handshake frame after the handshake")
	// errReorderStall: on a stream without ARQ (a released executor) a record has been
	// missing for reorderStallTimeout while later ones wait: a faulty rendezvous lost it and
	// nothing will resend it, so the stream is given up and session recovery takes over.
	errReorderStall = errors.New("Noise relay record missing: giving up the stream")
	// errARQProtocol wraps an ARQ protocol error from the executor (an ack of an unsent seq,
	// a record beyond the window): the stream fails and recovery takes over.
	errARQProtocol = errors.New("Noise relay ARQ protocol error")
)
