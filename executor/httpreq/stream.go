package httpreq

import (
	"context"
	"errors"
	"io"
	"sync"

	"github.com/execlab/executor/executor/protocol"
)

// stream is one streamed response body. Its pump goroutine is owned by the Client.
type stream struct {
	client *Client
	id     string
	cancel context.CancelFunc // ends the HTTP exchange (timeout/lifetime ctx)
	body   io.ReadCloser

	once sync.Once // start or abandon, whichever comes first
}

// start launches the pump; called by the connection after the response is queued.
func (s *stream) start() {
	s.once.Do(func() {
		c := s.client
		c.mu.Lock()
		closed := c.closed
		if !closed {
			c.wg.Add(1)
		}
		c.mu.Unlock()
		if closed {
			s.finish()
			return
		}
		go s.pump()
	})
}

// abandon releases a stream whose pump never started (connection closed first).
func (s *stream) abandon() { s.once.Do(s.finish) }

func (s *stream) finish() {
	s.body.Close()
	s.cancel()
	s.client.release(s.id)
}

// pump sends the body as it arrives: each read of at most deltaReadBytes that returns
// data becomes one delta (never held back to fill a buffer: a server-sent event reaches
// the client when the upstream sends it), seq from 1, then the terminal frame (done,
// empty delta, error on a mid-body failure). Notify blocks while the outbound queue is
// full, which bounds memory to one buffer per stream.
func (s *stream) pump() {
	c := s.client
	defer c.wg.Done()
	defer s.finish()
	buf := make([]byte, deltaReadBytes)
	seq := uint64(0)
	for {
		n, err := s.body.Read(buf)
		if n > 0 {
			seq++
			d := &protocol.HTTPBodyDelta{RequestID: s.id, Seq: seq, DeltaBase64: buf[:n]} // encoded before Notify returns: buf can be reused
			if nerr := c.notifier.Notify(c.ctx, protocol.MethodHTTPBodyDelta, d); nerr != nil {
				return
			}
		}
		if err == nil {
			continue
		}
		seq++
		last := &protocol.HTTPBodyDelta{RequestID: s.id, Seq: seq, Done: true}
		if !errors.Is(err, io.EOF) {
			msg := transportText(err)
			last.Error = &msg
		}
		c.notifier.Notify(c.ctx, protocol.MethodHTTPBodyDelta, last)
		return
	}
}
