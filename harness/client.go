package harness

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/execlab/executor/executor/protocol"
	"github.com/execlab/executor/jsonwire"
)

// Client is a JSON-RPC client for one executor connection. All methods are safe for
// concurrent use. Its read loop runs from Open until the connection ends or Close is
// called; after that every call fails with an error wrapping ErrClosed.
type Client struct {
	conn MessageConn
	opts Options
	log  *slog.Logger

	// life is the read loop's lifetime context (the one ctx this struct keeps): it is
	// passed to ReadMessage and to writes that must not die with a caller's ctx, and is
	// cancelled by Close.
	life   context.Context
	cancel context.CancelFunc

	nextID atomic.Int64

	// caps is the capabilities of the last successful Initialize (extensions.go); nil
	// before it.
	caps atomic.Pointer[protocol.Capabilities]

	// writeSem serialises WriteMessage (a MessageConn allows one writer at a time). It is
	// a channel, not a mutex, so that waiting for it honours the caller's ctx.
	writeSem chan struct{}

	// notes carries notifications to Notifications' reader (one slot); nil when
	// OnNotification is set. Its only sender is routineForward, which closes it once the
	// queue has ended and drained, or Close stops it.
	notes chan Notification
	// queue holds notifications between readLoop and routineForward (bounded by count and
	// bytes); nil when OnNotification is set.
	queue *noteQueue
	// acks tracks outputAck processes (ack.go); shared with a Dial's sessionConn.
	acks *outputAcks
	// tunnels are the open DialTCP connections (tunnel.go).
	tunnels tunnelTable
	// stop is closed by Close: routineForward stops handing out notifications.
	stop chan struct{}
	// fwdDone is closed when routineForward has returned (nil without it).
	fwdDone chan struct{}

	// mu guards pending and cause: the read loop resolves calls while callers register
	// and abandon them.
	mu      sync.Mutex
	pending map[int64]chan<- reply // guarded by mu; nil once the read loop has stopped
	cause   error                  // guarded by mu; why the read loop stopped

	closeOnce sync.Once
	closeErr  error
	done      chan struct{} // closed when readLoop has returned
}

// reply is the outcome of one call, delivered by readLoop.
type reply struct {
	result []byte
	err    error
}

// Open starts a Client on conn; the Client owns conn from now on and closes it on Close.
// Open starts the read loop goroutine, which Close waits for. opts may be nil.
func Open(conn MessageConn, opts *Options) *Client {
	return openClient(conn, opts, newOutputAcks())
}

// openClient is Open with the ack tracker given (Dial shares it with its sessionConn).
func openClient(conn MessageConn, opts *Options, acks *outputAcks) *Client {
	o := opts.withDefaults()
	life, cancel := context.WithCancel(context.Background())
	c := &Client{
		conn:     conn,
		opts:     o,
		log:      o.Logger.With("component", "harness"),
		life:     life,
		cancel:   cancel,
		writeSem: make(chan struct{}, 1),
		pending:  make(map[int64]chan<- reply),
		done:     make(chan struct{}),
		acks:     acks,
		stop:     make(chan struct{}),
	}
	c.nextID.Store(firstRequestID - 1)
	if o.OnNotification == nil {
		c.notes = make(chan Notification, 1) // one slot: what the consumer has not taken at Close stays readable
		c.queue = newNoteQueue(o.NotificationBuffer, o.NotificationBytes)
		c.fwdDone = make(chan struct{})
		go c.routineForward()
	}
	go c.readLoop()
	return c
}

// routineForward hands queued notifications to the Notifications channel, one at a time,
// and acknowledges consumed output (ack.go). Owner: the Client; started by Open, stopped
// by Close (stop) or by the end of the queue, after which it closes Notifications.
func (c *Client) routineForward() {
	defer close(c.fwdDone)
	defer close(c.notes)
	for {
		n, ok := c.queue.get(c.stop)
		if !ok {
			return
		}
		u := c.acks.inspect(n) // before the consumer has n: it may release n's storage
		select {
		case c.notes <- n:
		case <-c.stop:
			return
		}
		c.ackConsumed(u)
	}
}

// ackConsumed sends the process/ack that a notification's consumption makes due, if any
// (u is what acks.inspect read of it before it was handed over). A failed write is left to
// the transport: a Dial connection recovers and re-sends the last acks.
func (c *Client) ackConsumed(u consumption) {
	if msg := c.acks.consumedInfo(u); msg != nil {
		if err := c.write(c.life, msg); err != nil {
			c.log.Debug("process/ack not sent", "error", err.Error())
		}
	}
}

// Notifications returns the channel of notifications, in arrival order. It is closed
// when the connection has ended and every notification read before was taken, or at Close. It is nil when Options.OnNotification is set. The reader must
// keep draining it: a full channel stops the Client from reading responses.
func (c *Client) Notifications() <-chan Notification { return c.notes }

// Done is closed once the connection has ended and the read loop has stopped.
func (c *Client) Done() <-chan struct{} { return c.done }

// Err returns why the connection ended: nil while it is live or after a plain Close, the
// transport error otherwise, wrapping ErrProtocol when the peer broke the protocol.
func (c *Client) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if errors.Is(c.cause, ErrClosed) {
		return nil
	}
	return c.cause
}

// Close closes the connection, fails pending calls with ErrClosed and returns after the
// read loop has stopped. Later calls return the first call's result.
func (c *Client) Close() error {
	c.closeOnce.Do(func() {
		c.setCause(ErrClosed)
		c.cancel()
		c.closeErr = c.conn.Close()
		<-c.done
		close(c.stop)
		if c.fwdDone != nil {
			<-c.fwdDone
		}
	})
	return c.closeErr
}

// setCause records the first reason the connection ended.
func (c *Client) setCause(err error) {
	c.mu.Lock()
	if c.cause == nil {
		c.cause = err
	}
	c.mu.Unlock()
}

// closedError is the error calls return once the connection has ended.
func (c *Client) closedError() error {
	c.mu.Lock()
	cause := c.cause
	c.mu.Unlock()
	if cause == nil || errors.Is(cause, ErrClosed) {
		return ErrClosed
	}
	return fmt.Errorf("%w: %w", ErrClosed, cause)
}

// readLoop reads and dispatches messages until the connection ends. Owner: the Client;
// started by Open, waited for by Close.
func (c *Client) readLoop() {
	c.log.Debug("readLoop started")
	defer c.log.Debug("readLoop stopped")
	defer close(c.done)
	err := c.readMessages()
	c.setCause(err)
	// Close the transport too when the loop ended on its own (protocol violation): the
	// peer must not keep talking to a client that stopped reading.
	c.cancel()
	_ = c.conn.Close()
	c.mu.Lock()
	pending := c.pending
	c.pending = nil
	c.mu.Unlock()
	cerr := c.closedError()
	for _, ch := range pending {
		ch <- reply{err: cerr}
	}
	c.tunnels.resetAll(fmt.Errorf("%w: %w", ErrTunnelReset, cerr))
	if c.queue != nil {
		c.queue.end() // routineForward drains it, then closes Notifications
	}
}

func (c *Client) readMessages() error {
	rel, _ := c.conn.(messageReleaser)
	for {
		b, err := c.conn.ReadMessage(c.life)
		if err != nil {
			if c.life.Err() != nil {
				return ErrClosed
			}
			return fmt.Errorf("reading message: %w", err)
		}
		m, err := parseMessage(b)
		if err != nil {
			return fmt.Errorf("%w: decoding message: %w", ErrProtocol, err)
		}
		switch m.kind {
		case jsonwire.KindResponse, jsonwire.KindError:
			c.resolve(m)
		case jsonwire.KindNotification:
			if c.tunnels.handle(c, m.method, m.params) {
				if rel != nil {
					rel.ReleaseMessage(b)
				}
				continue
			}
			n := Notification{Method: m.method, Params: m.params, scanned: true}
			if rel != nil {
				n.storage = &msgStorage{buf: b, release: rel.ReleaseMessage}
			}
			if c.opts.OnNotification != nil {
				u := c.acks.inspect(n)
				c.opts.OnNotification(n)
				c.ackConsumed(u)
				continue
			}
			if !c.queue.put(c.life, n) {
				return ErrClosed
			}
		case jsonwire.KindRequest:
			if err := c.refuseRequest(m); err != nil {
				return err
			}
		}
	}
}

// resolve hands a response or error to its pending call. Replies to ids never issued or
// already abandoned (a cancelled call, the server's id -1 for input it could not parse)
// are dropped.
func (c *Client) resolve(m message) {
	id, ok := parseIntID(m.id)
	c.mu.Lock()
	ch, found := c.pending[id]
	if ok && found {
		delete(c.pending, id)
	}
	c.mu.Unlock()
	if !ok || !found {
		if ok && id == malformedReplyID {
			c.log.Warn("executor could not parse a message from this client")
		} else {
			c.log.Debug("dropping reply to no pending call")
		}
		return
	}
	if m.kind == jsonwire.KindResponse {
		ch <- reply{result: m.result}
		return
	}
	var e RPCError
	if err := jsonUnmarshal(m.errRaw, &e); err != nil {
		ch <- reply{err: fmt.Errorf("%w: decoding error response: %w", ErrProtocol, err)}
		return
	}
	ch <- reply{err: &e}
}

// refuseRequest answers a server→client request with -32601: this client handles none.
func (c *Client) refuseRequest(m message) error {
	msg := appendErrorResponse(nil, m.id, jsonwire.CodeMethodNotFound, "harness does not handle "+m.method)
	if err := c.write(c.life, msg); err != nil {
		if c.life.Err() != nil {
			return ErrClosed
		}
		return err
	}
	return nil
}

// write sends one message. Waiting for the write slot honours ctx; the write itself runs
// under the Client's lifetime so that an abandoned call cannot tear the transport down.
func (c *Client) write(ctx context.Context, msg []byte) error {
	select {
	case c.writeSem <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	case <-c.done:
		return c.closedError()
	}
	defer func() { <-c.writeSem }()
	if err := c.conn.WriteMessage(c.life, msg); err != nil {
		if c.life.Err() != nil {
			return c.closedError()
		}
		return fmt.Errorf("writing message: %w", err)
	}
	return nil
}
