package executortest

import (
	"context"
	"errors"
	"sync"
)

// ErrClosed is returned by a pipe end after either end is closed.
var ErrClosed = errors.New("executortest: pipe closed")

// End is one end of an in-memory message pipe. Messages are copied; delivery is ordered
// and unbuffered beyond Buffer messages per direction (writers block when it is full).
type End struct {
	in, out chan []byte
	done    chan struct{} // shared by both ends: closed once
	once    *sync.Once
}

// Buffer is the per-direction queue length of a pipe.
const Buffer = 64

// Pipe returns two connected ends.
func Pipe() (*End, *End) {
	a2b, b2a := make(chan []byte, Buffer), make(chan []byte, Buffer)
	done, once := make(chan struct{}), new(sync.Once)
	return &End{in: b2a, out: a2b, done: done, once: once}, &End{in: a2b, out: b2a, done: done, once: once}
}

// ReadMessage returns the next message from the other end.
func (e *End) ReadMessage(ctx context.Context) ([]byte, error) {
	select {
	case b := <-e.in:
		return b, nil
	case <-e.done:
		return nil, ErrClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// WriteMessage sends a copy of msg to the other end.
func (e *End) WriteMessage(ctx context.Context, msg []byte) error {
	b := append([]byte(nil), msg...)
	select {
	case <-e.done:
		return ErrClosed
	default:
	}
	select {
	case e.out <- b:
		return nil
	case <-e.done:
		return ErrClosed
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Close closes both ends.
func (e *End) Close() error {
	e.once.Do(func() { close(e.done) })
	return nil
}
