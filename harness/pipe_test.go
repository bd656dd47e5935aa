package harness_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"

	"github.com/execlab/executor/harness"
)

// errPipeClosed is what a closed pipe end returns.
var errPipeClosed = errors.New("pipe closed")

// pipeEnd is one end of an in-memory MessageConn pair built on unbuffered channels, so
// that it works inside testing/synctest bubbles. Closing either end closes both.
type pipeEnd struct {
	in     <-chan []byte
	out    chan<- []byte
	closed chan struct{}
	once   *sync.Once
}

func newPipe() (client, server *pipeEnd) {
	a, b := make(chan []byte), make(chan []byte)
	closed := make(chan struct{})
	once := new(sync.Once)
	return &pipeEnd{in: a, out: b, closed: closed, once: once},
		&pipeEnd{in: b, out: a, closed: closed, once: once}
}

func (p *pipeEnd) ReadMessage(ctx context.Context) ([]byte, error) {
	select {
	case m := <-p.in:
		return m, nil
	case <-p.closed:
		return nil, errPipeClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (p *pipeEnd) WriteMessage(ctx context.Context, msg []byte) error {
	select {
	case p.out <- append([]byte(nil), msg...):
		return nil
	case <-p.closed:
		return errPipeClosed
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (p *pipeEnd) Close() error {
	p.once.Do(func() { close(p.closed) })
	return nil
}

// fakeServer drives the server end of a pipe from a test.
// openFake opens a Client with opts on an in-memory pipe and returns it with the fake
// server on the other end. The caller closes the Client.
func openFake(t *testing.T, opts *harness.Options) (*harness.Client, *fakeServer) {
	cp, sp := newPipe()
	return harness.Open(cp, opts), &fakeServer{t, sp}
}

type fakeServer struct {
	t *testing.T
	p *pipeEnd
}

// wireMsg is a decoded message as the fake server sees it.
type wireMsg struct {
	ID     *json.RawMessage `json:"id"`
	Method string           `json:"method"`
	Params json.RawMessage  `json:"params"`
	raw    []byte
}

// recv reads one message from the client.
func (s *fakeServer) recv() wireMsg {
	s.t.Helper()
	b, err := s.p.ReadMessage(context.Background())
	if err != nil {
		s.t.Fatalf("fake server: reading: %v", err)
	}
	var m wireMsg
	if err := json.Unmarshal(b, &m); err != nil {
		s.t.Fatalf("fake server: decoding %s: %v", b, err)
	}
	m.raw = b
	return m
}

// send writes a raw message to the client.
func (s *fakeServer) send(msg string) {
	s.t.Helper()
	if err := s.p.WriteMessage(context.Background(), []byte(msg)); err != nil {
		s.t.Fatalf("fake server: writing: %v", err)
	}
}

func (m wireMsg) id() string {
	if m.ID == nil {
		return ""
	}
	return string(*m.ID)
}
