package arq

import "errors"

// Protocol errors: a conforming ARQ v1 peer never causes them; the driver resets the stream.
var (
	// ErrAckBeyondSent: an ack or ack bit names a seq that was never sent.
	ErrAckBeyondSent = errors.New("relay arq: ack for a record never sent")
	// ErrBeyondWindow: a record arrived Window or more records ahead of the next expected.
	ErrBeyondWindow = errors.New("relay arq: record beyond the receive window")
	// ErrSeqOrder: the sender was given a seq other than the next one.
	ErrSeqOrder = errors.New("relay arq: records sent out of seq order")
	// ErrWindowFull: Sent was called without Room.
	ErrWindowFull = errors.New("relay arq: send window full")
	// ErrClosed: Endpoint.Send gave up because the driver's stream ended.
	ErrClosed = errors.New("relay arq: stream ended")
)
