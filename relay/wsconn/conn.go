package wsconn

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"

	"github.com/execlab/executor/relay/mux"

	"github.com/execlab/executor/relay/frame"
)

// Errors returned by Conn.
var (
	// ErrMessageTooLarge: a message over MaxMessageSize was read or offered for writing. On
	// read it fails the connection (reason read_error).
	ErrMessageTooLarge = errors.New("wsconn: websocket message exceeds 256 KiB")
	// ErrPongTimeout: Keepalive dropped the connection because no Pong came back in time.
	ErrPongTimeout = errors.New("wsconn: no pong within the pong deadline")
	// ErrClosed: the Conn was closed locally.
	ErrClosed = errors.New("wsconn: connection closed")
)

// Options tunes a Conn. Nil means defaults; it is never mutated. The defaults are the
// released executor's values; tests shorten them.
type Options struct {
	// PingInterval is the Keepalive period. Default PingInterval (30 s).
	PingInterval time.Duration
	// PongTimeout is the Pong deadline after each Ping. Default PongTimeout (60 s).
	PongTimeout time.Duration
	// WriteTimeout bounds each WriteFrame. Default WriteTimeout (60 s).
	WriteTimeout time.Duration
	// ParkedReaderGrace, when true, keeps Keepalive from taking a parked reader for a dead
	// link: Pongs are only seen while a ReadFrame runs, so when a Pong deadline passes and
	// ReadFrame ran for less than half of the wait (the caller stopped reading: back-
	// pressure from a slow consumer), Keepalive pings again instead of dropping the
	// connection. A dead link is still found within PongTimeout of the reader's return.
	// Default false: the released executor's rule (spec/relay-noise.md §10), which the
	// executor keeps; our harness and rendezvous set it.
	ParkedReaderGrace bool
	// Logger receives debug events (keepalive start/stop). Nil discards.
	Logger *slog.Logger
}

func (o *Options) withDefaults() Options {
	var c Options
	if o != nil {
		c = *o
	}
	if c.PingInterval <= 0 {
		c.PingInterval = PingInterval
	}
	if c.PongTimeout <= 0 {
		c.PongTimeout = PongTimeout
	}
	if c.WriteTimeout <= 0 {
		c.WriteTimeout = WriteTimeout
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c
}

// Conn is one relay websocket. It implements mux.FrameConn.
//
// ReadFrame and WriteFrame may run concurrently with each other, each from one goroutine at a
// time; Keepalive needs a concurrent ReadFrame loop to see Pongs. After any read or write
// error, or Close, the connection is gone and Reason says why.
type Conn struct {
	ws   *websocket.Conn
	opts Options
	// cork batches each written frame into one write syscall (cork.go); nil for TLS
	// accepts and for dials with a caller's HTTPClient. On an accepted connection it is
	// only the lock and the write path shared with the library (nothing is batched).
	cork *corkConn
	// raw: the cork is the connection the websocket library writes to (no TLS), so
	// binary frames are built and written here (rawframe.go).
	raw bool
	// server: accepted by this package; its frames are not masked (RFC 6455 §5.1).
	server bool

	reason atomic.Uint32 // CloseReason; first one wins

	// readNanos is the time spent in completed ReadFrame calls, in ns; readStart the unix
	// ns at which the ReadFrame in progress began, 0 when none (ReadingTime).
	readNanos atomic.Int64
	readStart atomic.Int64
	closed    chan struct{} // closed by fail/Close
	once      sync.Once
}

var _ mux.FrameConn = (*Conn)(nil)

// scratchPool holds read buffers of readScratchSize bytes; a Conn borrows one only while a
// message is being read, so idle connections hold none.
// framePool holds the buffers messages are read into, frameBufferSize bytes each (issue
// 16). A message of at least half that size is returned in the pooled buffer itself, with
// no copy; a smaller one is copied out exactly sized and the buffer goes back at once; a
// larger one continues in a buffer grown by doubling (rare: a relay frame carries at most
// one 61,456-byte Noise record). A returned buffer comes back only through ReleaseFrame.
var framePool = sync.Pool{New: func() any { b := make([]byte, frameBufferSize); return &b }}

// New wraps an established websocket. It sets the read limit to MaxMessageSize and starts
// nothing.
func New(ws *websocket.Conn, opts *Options) *Conn {
	ws.SetReadLimit(MaxMessageSize)
	return &Conn{ws: ws, opts: opts.withDefaults(), closed: make(chan struct{})}
}

// ReadFrame returns the next binary message, owned by the caller: its capacity is at most
// twice its length (a message of frameBufferSize/2 bytes or more is returned in the buffer
// it was read into, so a stream of full relay records is not copied once more), and the
// caller may hand it back with ReleaseFrame when done. A text message is drained and
// reported as an error wrapping frame.ErrNonBinary; the Conn stays usable. Any other error
// fails the Conn (reason peer_close or read_error). A ctx error also fails the Conn
// (coder/websocket cannot abandon a read halfway).
func (c *Conn) ReadFrame(ctx context.Context) ([]byte, error) {
	start := time.Now().UnixNano()
	c.readStart.Store(start)
	defer func() {
		c.readNanos.Add(time.Now().UnixNano() - start)
		c.readStart.Store(0)
	}()
	typ, r, err := c.ws.Reader(ctx)
	if err != nil {
		return nil, c.readFailed(err)
	}
	if typ != websocket.MessageBinary {
		if _, err := io.Copy(io.Discard, io.LimitReader(r, discardLimit)); err != nil {
			return nil, c.readFailed(err)
		}
		return nil, fmt.Errorf("reading websocket message: %w", frame.ErrNonBinary)
	}
	// The buffer is taken only now that a message has begun: an idle Conn holds none.
	bp := framePool.Get().(*[]byte)
	buf, err := readMessage(r, *bp)
	switch {
	case err != nil:
		framePool.Put(bp)
		return nil, c.readFailed(err)
	case len(buf) > MaxMessageSize:
		framePool.Put(bp)
		c.fail(ReasonReadError)
		return nil, ErrMessageTooLarge
	case cap(buf) != frameBufferSize: // grown: bp's buffer is free again
		framePool.Put(bp)
		return buf, nil
	case len(buf) < frameBufferSize/2:
		out := make([]byte, len(buf))
		copy(out, buf)
		framePool.Put(bp)
		return out, nil
	}
	return buf, nil // bp's buffer now belongs to the caller
}

// readMessage reads r to EOF into buf[:cap(buf)], growing it by doubling up to
// readScratchSize (one byte more than MaxMessageSize, so an oversized message is detected
// without relying on the websocket library's off-by-one read limit). It stops early once
// more than MaxMessageSize bytes arrived; the caller checks the length.
func readMessage(r io.Reader, buf []byte) ([]byte, error) {
	buf = buf[:cap(buf)]
	n := 0
	for {
		if n == len(buf) {
			grown := make([]byte, min(2*len(buf), readScratchSize))
			copy(grown, buf[:n])
			buf = grown
		}
		m, err := r.Read(buf[n:])
		n += m
		if errors.Is(err, io.EOF) {
			return buf[:n], nil
		}
		if err != nil {
			return nil, err
		}
		if n > MaxMessageSize {
			return buf[:n], nil
		}
	}
}

// ReleaseFrame is the package's ReleaseFrame, as a method for consumers that take the
// socket as an interface (relay/initiator.Conn).
func (c *Conn) ReleaseFrame(b []byte) { ReleaseFrame(b) }

// ReleaseFrame hands back a message ReadFrame returned, once the caller and everyone it
// passed the message to are done with it: a later ReadFrame (of any Conn) may reuse its
// storage. Releasing is optional (an unreleased message is simply collected); only
// messages held in a pooled buffer are kept. b must not be used after the call.
func ReleaseFrame(b []byte) {
	if cap(b) != frameBufferSize {
		return
	}
	b = b[:cap(b)]
	framePool.Put(&b)
}

func (c *Conn) readFailed(err error) error {
	switch {
	case websocket.CloseStatus(err) != -1:
		c.fail(ReasonPeerClose)
	case errors.Is(err, websocket.ErrMessageTooBig):
		c.fail(ReasonReadError)
		return ErrMessageTooLarge
	default:
		c.fail(ReasonReadError)
	}
	if c.Reason() == ReasonLocalShutdown {
		return ErrClosed
	}
	return fmt.Errorf("reading websocket message: %w", err)
}

// WriteFrame sends b as one binary message within WriteTimeout (and ctx). A failure fails the
// Conn (reason write_error): a partial websocket frame may be on the wire.
func (c *Conn) WriteFrame(ctx context.Context, b []byte) error {
	return c.WriteFrameSplit(ctx, b, nil)
}

// WriteFrameSplit sends head ‖ tail as one binary message, as WriteFrame does, without
// joining the two first on a dialled ws:// connection (rawframe.go); it implements
// mux.SplitFrameWriter. It does not retain either slice. Like WriteFrame it is called by one
// goroutine at a time, and never concurrently with WriteFrame.
func (c *Conn) WriteFrameSplit(ctx context.Context, head, tail []byte) error {
	if len(head)+len(tail) > MaxMessageSize {
		return ErrMessageTooLarge
	}
	var err error
	if c.raw {
		err = c.writeRaw(ctx, head, tail)
	} else {
		err = c.writeJoined(ctx, head, tail)
	}
	if err != nil {
		c.fail(ReasonWriteError)
		if c.Reason() == ReasonLocalShutdown {
			return ErrClosed
		}
		return fmt.Errorf("writing websocket message: %w", err)
	}
	return nil
}

// writeJoined writes head ‖ tail through the websocket library, joined in a pooled buffer
// when there is a tail.
func (c *Conn) writeJoined(ctx context.Context, head, tail []byte) error {
	ctx, cancel := context.WithTimeout(ctx, c.opts.WriteTimeout)
	defer cancel()
	if len(tail) == 0 {
		return c.writeCorked(ctx, head)
	}
	bp := corkPool.Get().(*[]byte)
	b := append(append((*bp)[:0], head...), tail...)
	err := c.writeCorked(ctx, b)
	*bp = b[:0]
	corkPool.Put(bp)
	return err
}

// ReadingTime returns the total time ReadFrame has spent running (waiting for and reading
// messages), the one in progress included. Approximate under concurrent ReadFrame
// entry/exit. Liveness checks use it to tell a silent link (the reader waits) from a parked
// reader (the caller is not reading, so Pongs cannot be seen).
func (c *Conn) ReadingTime() time.Duration {
	d := c.readNanos.Load()
	if s := c.readStart.Load(); s != 0 {
		d += time.Now().UnixNano() - s
	}
	return time.Duration(d)
}

// ReaderWasParked reports whether, since ReadingTime returned readingBefore, ReadFrame ran
// for less than half of waited: the caller mostly was not reading, so a missing Pong says
// nothing about the link.
func (c *Conn) ReaderWasParked(readingBefore, waited time.Duration) bool {
	return c.ReadingTime()-readingBefore < waited/2
}

// writeCorked writes b as one binary message, through the cork when there is one.
func (c *Conn) writeCorked(ctx context.Context, b []byte) error {
	if c.cork == nil || c.server {
		return c.ws.Write(ctx, websocket.MessageBinary, b)
	}
	c.cork.hold()
	err := c.ws.Write(ctx, websocket.MessageBinary, b)
	if rerr := c.cork.release(ctx); err == nil {
		err = rerr
	}
	return err
}

// Keepalive sends a Ping every PingInterval, one at a time, and drops the connection when its
// Pong does not arrive within PongTimeout (returning ErrPongTimeout). It returns nil when ctx
// is done or the Conn ends for another reason. Pongs are only seen while a ReadFrame loop runs.
func (c *Conn) Keepalive(ctx context.Context) error {
	c.opts.Logger.Debug("keepalive started", "component", "wsconn")
	defer c.opts.Logger.Debug("keepalive stopped", "component", "wsconn")
	t := time.NewTicker(c.opts.PingInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-c.closed:
			return nil
		case <-t.C:
		}
		timedOut, err := c.pingUntilAnswered(ctx)
		switch {
		case err == nil:
		case ctx.Err() != nil:
			return nil
		case timedOut:
			c.fail(ReasonPongTimeout)
			return ErrPongTimeout
		default:
			// The ping write failed, or the conn ended meanwhile.
			c.fail(ReasonWriteError)
			return nil
		}
	}
}

// pingUntilAnswered sends one Ping and waits PongTimeout for its Pong; with
// ParkedReaderGrace it pings again while the reader was parked during the wait. timedOut
// says the last wait ran out.
func (c *Conn) pingUntilAnswered(ctx context.Context) (timedOut bool, err error) {
	for {
		pctx, cancel := context.WithTimeout(ctx, c.opts.PongTimeout)
		readingBefore := c.ReadingTime()
		err = c.ws.Ping(pctx)
		timedOut = errors.Is(pctx.Err(), context.DeadlineExceeded)
		cancel()
		if err == nil || !timedOut || ctx.Err() != nil || !c.opts.ParkedReaderGrace ||
			!c.ReaderWasParked(readingBefore, c.opts.PongTimeout) {
			return timedOut, err
		}
	}
}

// Ping sends a Ping and waits for its Pong until ctx ends (Pongs are only seen while a
// ReadFrame runs). It does not fail the Conn; callers with their own ping schedule (the
// rendezvous) decide what a missing Pong means.
func (c *Conn) Ping(ctx context.Context) error { return c.ws.Ping(ctx) }

// Close drops the connection without a close handshake (reason local_shutdown unless another
// reason came first). It is safe to call more than once and from any goroutine.
func (c *Conn) Close() error {
	c.fail(ReasonLocalShutdown)
	return nil
}

// Done is closed once the Conn has failed or been closed.
func (c *Conn) Done() <-chan struct{} { return c.closed }

// Reason reports why the Conn ended, or ReasonNone while it is open.
func (c *Conn) Reason() CloseReason { return CloseReason(c.reason.Load()) }

// fail records r (first reason wins) and drops the TCP connection.
func (c *Conn) fail(r CloseReason) {
	c.reason.CompareAndSwap(uint32(ReasonNone), uint32(r))
	c.once.Do(func() {
		close(c.closed)
		_ = c.ws.CloseNow()
	})
}
