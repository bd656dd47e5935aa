package jsonrpc

// Decoding while a message arrives (issue 28, writeblock_local in docs/bench.md).
//
// A 1 MiB fs/writeBlock request is 1.4 MB of base64 that takes the transport about as
// long to receive as the server then spends checking and decoding it. When both the
// MessageConn (ArrivingReader: internal/wsmsg) and the Handler (EarlyDecoder: the
// executor) take part, the read loop shows each message's bytes to the Handler's Arrival
// as they come in; the Arrival decodes what it recognises into storage of its own and,
// once the message is complete, names the string body it checked (Parse skips it) and a
// value that travels with the Message (Message.Early) to Handle. The Arrival is only a
// head start: Parse and the params decoding still run over the whole message, and an
// Arrival's value is used only where the normal decoding reaches the very bytes it
// decoded, so every error and every result is the one the message gets without it.

import (
	"context"

	"github.com/execlab/executor/jsonwire"
)

// ArrivingReader is implemented by a MessageConn that can show a message while it is
// being read: ReadMessageArriving is ReadMessage, calling seen after each read that did
// not end the message with the bytes received so far (a growing prefix of the message;
// the backing array may change between calls). seen runs on the reading goroutine and
// must not keep the slice.
type ArrivingReader interface {
	ReadMessageArriving(ctx context.Context, seen func(sofar []byte)) ([]byte, error)
}

// EarlyDecoder is implemented by a Handler that decodes part of its requests while they
// arrive. Arrival is called once per connection, before the first read; the Arrival it
// returns is used by the read loop only, one message at a time.
type EarlyDecoder interface {
	Arrival() Arrival
}

// Arrival follows one message at a time on the read loop.
type Arrival interface {
	// Seen is called with the bytes of the message received so far, after each read
	// that did not end it.
	Seen(sofar []byte)
	// Arrived ends the message: data is all of it, or nil when the read failed. It
	// returns the string body the Arrival checked (the zero value for none: Parse then
	// scans everything), the value for Message.Early (nil for none) and the bytes of
	// memory that value holds (charged against InboundBytes with the message while it is
	// queued), and readies the Arrival for the next message.
	Arrived(data []byte) (known jsonwire.KnownString, early any, held int)
}

// arrived is one message as the read loop got it.
type arrived struct {
	data  []byte
	known jsonwire.KnownString // see Arrival.Arrived
	early any
	held  int
}

// readMessage reads the next message, through arrival when there is one.
func (c *Conn) readMessage(ctx context.Context, ar ArrivingReader, arrival Arrival) (arrived, error) {
	if arrival == nil {
		data, err := c.mc.ReadMessage(ctx)
		return arrived{data: data}, err
	}
	data, err := ar.ReadMessageArriving(ctx, arrival.Seen)
	if err != nil {
		arrival.Arrived(nil)
		return arrived{}, err
	}
	known, early, held := arrival.Arrived(data)
	return arrived{data: data, known: known, early: early, held: held}, nil
}

// arrivalFor returns the connection's Arrival when both sides take part, else nil.
func (c *Conn) arrivalFor(h Handler) (ArrivingReader, Arrival) {
	ed, ok := h.(EarlyDecoder)
	if !ok {
		return nil, nil
	}
	ar, ok := c.mc.(ArrivingReader)
	if !ok {
		return nil, nil
	}
	return ar, ed.Arrival()
}
