package mux

import "context"

// FrameConn is one physical relay connection as the Mux consumes it: a sequence of binary
// websocket messages, each holding one encoded RelayMessageFrame. relay/wsconn provides the
// production implementation; relay/relaytest provides in-memory pairs.
//
// Contract:
//   - ReadFrame is called by one goroutine at a time. It returns the next binary message; the
//     slice belongs to the caller from then on. An error wrapping frame.ErrNonBinary means one
//     non-binary (text) message was read and dropped: the connection stays usable. Any other
//     error ends the connection; later calls keep failing.
//   - WriteFrame is called by one goroutine at a time, possibly concurrently with ReadFrame. It
//     sends b as one binary message and does not retain b. It must give up (and fail the
//     connection) when ctx is done or its own write deadline passes.
//   - Close drops the connection at once (no websocket close handshake, like the reference
//     executor). It is safe from any goroutine, more than once, and unblocks ReadFrame and
//     WriteFrame.
type FrameConn interface {
	ReadFrame(ctx context.Context) ([]byte, error)
	WriteFrame(ctx context.Context, b []byte) error
	Close() error
}

// SplitFrameWriter is implemented by a FrameConn that can send a message given as two
// parts, the encoded frame's head and its trailing payload (relay/frame.EncodeSplit), without
// the Mux joining them first (issue 16: relay/wsconn masks both straight into its write
// buffer, so a record is copied once on its way to the socket). WriteFrameSplit is called
// under WriteFrame's contract (one goroutine at a time, never concurrently with WriteFrame)
// and sends head ‖ tail as one binary message; it retains neither slice.
type SplitFrameWriter interface {
	WriteFrameSplit(ctx context.Context, head, tail []byte) error
}
