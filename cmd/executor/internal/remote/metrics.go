package remote

import (
	"context"
	"errors"
	"time"

	"github.com/execlab/executor/noise/channel"
	"github.com/execlab/executor/relay/mux"
)

// Observer receives the remote loop's counts, for metrics (package main wires
// telemetry to it). It embeds mux.Observer, handed to every socket's mux. Every
// value passed is one of the constants below: no stream, registration or request id.
// Implementations must be safe for concurrent use and cheap.
type Observer interface {
	mux.Observer
	// StreamStarted and StreamEnded bracket each harness stream the mux hands over.
	StreamStarted()
	StreamEnded()
	// Handshake is called once per stream whose Noise handshake ended, with its outcome.
	Handshake(outcome string)
	// Registered is called after each successful registration; again is false for the
	// first one of the process and true for a re-registration.
	Registered(again bool)
	// RendezvousDial is called after each rendezvous dial, with its outcome.
	RendezvousDial(outcome string)
	// TrackMux is called when a socket's mux starts, with its Stats method (read at scrape
	// time: the outbound queue depth); the returned untrack is called once it has stopped.
	TrackMux(stats func() mux.Stats) (untrack func())
}

// HandshakeTracer traces harness streams (package main wires telemetry to it;
// this package imports no tracing library). StartHandshake is called when the mux hands
// a stream over, with the cleartext traceparent of the frame that opened it (relay frame
// field 11, "" if none: untrusted, the tracer parses it); the returned ctx serves the
// stream (Noise handshake, registry validation, then the JSON-RPC session, whose request
// spans become children), and end is called once with the handshake's outcome.
type HandshakeTracer interface {
	StartHandshake(ctx context.Context, traceparent string) (context.Context, func(outcome string))
}

// Handshake outcomes.
const (
	HandshakeOK           = "ok"
	HandshakeUnauthorized = "unauthorized" // the registry refused the harness's authorization
	HandshakeFailed       = "failed"       // a Noise or validation error (not a refusal)
	HandshakeCapacity     = "capacity"     // completed, but the stream table was full
	HandshakeCancelled    = "cancelled"    // the peer or the mux ended the stream first
)

// Rendezvous dial outcomes.
const (
	DialOK           = "ok"
	DialHTTPError    = "http_error"    // the upgrade got an HTTP error status
	DialNetworkError = "network_error" // no HTTP answer
)

// handshakeOutcome classifies a failed responder handshake.
func handshakeOutcome(err error) string {
	var aerr *channel.AuthorizeError
	switch {
	case errors.As(err, &aerr):
		return HandshakeUnauthorized
	case errors.Is(err, mux.ErrStreamClosed), errors.Is(err, mux.ErrStreamReset), errors.Is(err, mux.ErrConnClosed):
		return HandshakeCancelled
	}
	return HandshakeFailed
}

// nopObserver is the Observer of a nil Config.Observer.
type nopObserver struct{}

func (nopObserver) FrameDropped(string)     {}
func (nopObserver) HandshakeRefused(string) {}
func (nopObserver) CooldownEntered()        {}
func (nopObserver) StreamStarted()          {}
func (nopObserver) StreamEnded()            {}
func (nopObserver) Handshake(string)        {}
func (nopObserver) Registered(bool)         {}
func (nopObserver) RendezvousDial(string)   {}

func (nopObserver) Backpressure(string, time.Duration) {}
func (nopObserver) TrackMux(func() mux.Stats) func()   { return func() {} }
