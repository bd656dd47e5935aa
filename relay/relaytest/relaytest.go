package relaytest

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/execlab/executor/relay/mux"

	"github.com/execlab/executor/relay/frame"
)

// DefaultCapacity is the per-direction queue of a Pipe, in messages.
const DefaultCapacity = 1024

// ErrClosed is returned after either end of a pipe was closed.
var ErrClosed = errors.New("relaytest: pipe closed")

type message struct {
	text bool
	b    []byte
}

type pipeState struct {
	once sync.Once
	done chan struct{}
}

// Conn is one end of a Pipe. It implements mux.FrameConn.
type Conn struct {
	in    <-chan message
	out   chan<- message
	state *pipeState
}

var _ mux.FrameConn = (*Conn)(nil)

// Pipe returns two connected ends with capacity messages queued per direction (≤ 0 means
// DefaultCapacity).
func Pipe(capacity int) (*Conn, *Conn) {
	if capacity <= 0 {
		capacity = DefaultCapacity
	}
	ab, ba := make(chan message, capacity), make(chan message, capacity)
	st := &pipeState{done: make(chan struct{})}
	return &Conn{in: ba, out: ab, state: st}, &Conn{in: ab, out: ba, state: st}
}

// ReadFrame returns the next message written by the other end. A text message yields an
// error wrapping frame.ErrNonBinary.
func (c *Conn) ReadFrame(ctx context.Context) ([]byte, error) {
	select {
	case m := <-c.in:
		if m.text {
			return nil, fmt.Errorf("relaytest: %w", frame.ErrNonBinary)
		}
		return m.b, nil
	case <-c.state.done:
		return nil, ErrClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// WriteFrame queues a copy of b for the other end, blocking while the queue is full.
func (c *Conn) WriteFrame(ctx context.Context, b []byte) error {
	return c.send(ctx, message{b: append([]byte(nil), b...)})
}

// SendText queues a text message for the other end.
func (c *Conn) SendText(ctx context.Context, s string) error {
	return c.send(ctx, message{text: true, b: []byte(s)})
}

func (c *Conn) send(ctx context.Context, m message) error {
	select {
	case <-c.state.done:
		return ErrClosed
	default:
	}
	select {
	case c.out <- m:
		return nil
	case <-c.state.done:
		return ErrClosed
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Close ends both ends. It is idempotent.
func (c *Conn) Close() error {
	c.state.once.Do(func() { close(c.state.done) })
	return nil
}

// Done is closed once either end was closed.
func (c *Conn) Done() <-chan struct{} { return c.state.done }
