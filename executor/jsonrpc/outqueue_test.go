package jsonrpc

import (
	"context"
	"errors"
	"testing"
)

// sinkConn is a MessageConn whose writes go to a channel.
type sinkConn struct{ got chan []byte }

func (s sinkConn) ReadMessage(ctx context.Context) ([]byte, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

func (s sinkConn) WriteMessage(_ context.Context, msg []byte) error {
	s.got <- append([]byte(nil), msg...)
	return nil
}

func (s sinkConn) Close() error { return nil }

// TestOutQueue_OrderAndIdle: queued messages are written in order, and once the writer
// took the last one the connection holds no queue array (the idle_stream_memory bench
// row: an idle connection's outbound queue costs nothing) and no queued bytes.
func TestOutQueue_OrderAndIdle(t *testing.T) {
	sink := sinkConn{got: make(chan []byte)}
	c := NewConn(sink, nil)
	ctx, cancel := context.WithCancelCause(context.Background())
	done := make(chan struct{})
	go func() { // owner: this test, which cancels and waits below
		defer close(done)
		c.writeLoop(ctx, cancel)
	}()
	defer func() {
		cancel(errors.New("test over"))
		<-done
	}()
	for _, m := range []string{"a", "bb", "ccc"} {
		if err := c.push(context.Background(), []byte(m)); err != nil {
			t.Fatal(err)
		}
	}
	for _, want := range []string{"a", "bb", "ccc"} {
		if got := string(<-sink.got); got != want {
			t.Fatalf("wrote %q, want %q", got, want)
		}
	}
	c.qmu.Lock()
	out := c.out
	c.qmu.Unlock()
	if out != nil {
		t.Fatalf("queue array kept after draining: len %d cap %d", len(out), cap(out))
	}
}
