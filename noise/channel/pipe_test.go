package channel_test

import (
	"context"
	"errors"
	"io"
	"sync"
	"testing"

	"go.uber.org/goleak"

	"github.com/execlab/executor/noise/channel"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// pipeEnd is one side of an in-memory RecordConn pair. Writes are recorded so tests can
// inspect what went on the wire.
type pipeEnd struct {
	in   <-chan channel.Packet
	out  chan<- channel.Packet
	done chan struct{} // closed by this end's Close
	peer *pipeEnd

	closeOnce sync.Once
	mu        sync.Mutex
	written   []channel.Packet // guarded by mu
	closes    int              // guarded by mu
}

var errPipeClosed = errors.New("pipe closed")

// newPipe returns two connected ends; each direction buffers up to buf packets.
func newPipe(buf int) (a, b *pipeEnd) {
	ab, ba := make(chan channel.Packet, buf), make(chan channel.Packet, buf)
	a = &pipeEnd{in: ba, out: ab, done: make(chan struct{})}
	b = &pipeEnd{in: ab, out: ba, done: make(chan struct{})}
	a.peer, b.peer = b, a
	return a, b
}

func (p *pipeEnd) ReadPacket(ctx context.Context) (channel.Packet, error) {
	select {
	case pk := <-p.in:
		return pk, nil
	default:
	}
	select {
	case pk := <-p.in:
		return pk, nil
	case <-ctx.Done():
		return channel.Packet{}, ctx.Err()
	case <-p.done:
		return channel.Packet{}, errPipeClosed
	case <-p.peer.done:
		return channel.Packet{}, io.EOF
	}
}

func (p *pipeEnd) WritePacket(ctx context.Context, pk channel.Packet) error {
	select {
	case <-p.done:
		return errPipeClosed
	case <-p.peer.done:
		return io.EOF
	default:
	}
	select {
	case p.out <- pk:
		p.mu.Lock()
		p.written = append(p.written, pk)
		p.mu.Unlock()
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-p.done:
		return errPipeClosed
	case <-p.peer.done:
		return io.EOF
	}
}

func (p *pipeEnd) Close() error {
	p.mu.Lock()
	p.closes++
	p.mu.Unlock()
	p.closeOnce.Do(func() { close(p.done) })
	return nil
}

func (p *pipeEnd) Written() []channel.Packet {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]channel.Packet(nil), p.written...)
}

func (p *pipeEnd) Closes() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.closes
}
