package mux

import "errors"

// Errors returned to stream users and by Run.
var (
	// ErrStreamReset: the peer reset the stream (its reason is never propagated).
	ErrStreamReset = errors.New("Noise relay stream reset") //lint:ignore ST1005 the reference's text
	// ErrStreamClosed: the stream ended locally (Close, Handler return, cancelled pending
	// handshake, inbound overflow) or is not in a state that allows the call (a stale
	// handshake write).
	ErrStreamClosed = errors.New("relay: stream closed")
	// ErrConnClosed: the physical connection ended; every stream ends with it.
	ErrConnClosed = errors.New("relay: connection closed")
	// ErrStreamLimit: Established found MaxStreams streams already active.
	ErrStreamLimit = errors.New("relay: stream limit reached")
	// ErrQueueFull: message 2 could not be enqueued; the physical connection was closed.
	ErrQueueFull = errors.New("relay: outbound queue full")
)
