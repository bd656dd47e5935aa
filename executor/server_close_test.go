package executor_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/execlab/executor/executor"
	"github.com/execlab/executor/executor/executortest"
)

// serveAsync runs ServeConn on one end of a pipe and reports its result on the channel. The
// goroutine is owned by the test: every test below waits for the channel.
func serveAsync(t *testing.T, srv *executor.Server) (*executortest.Client, <-chan error) {
	t.Helper()
	a, b := executortest.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- srv.ServeConn(context.Background(), b, executor.ConnInfo{Transport: executor.TransportStdio})
	}()
	c := executortest.NewClient(t, a)
	t.Cleanup(c.Close)
	return c, done
}

// returned reports whether done holds ServeConn's result once Close has returned. The
// test goroutine's send on done runs a few instructions after ServeConn's last deferred
// call (the server's conns.Done, which Close waits for), and the scheduler may run Close's
// caller first; so this allows that hand-off a short grace (a second) instead of
// demanding the send already happened. A ServeConn that Close did not wait for would
// still be serving: far longer than the grace in these tests (a 60 s long-poll, or an
// idle connection that nothing else ends).
func returned(done <-chan error) (error, bool) {
	select {
	case err := <-done:
		return err, true
	case <-time.After(time.Second):
		return nil, false
	}
}

// TestServer_CloseWaitsForServeConn: Close cancels a connection that is busy in a 60 s
// long-poll and returns only after its ServeConn has returned ErrServerClosed; the client
// sees its end closed.
func TestServer_CloseWaitsForServeConn(t *testing.T) {
	srv := executor.NewServer(nil)
	c, done := serveAsync(t, srv)
	c.Handshake("")
	resp, _ := c.Call(1, "process/start", startParams("p", "sleep", "60"))
	if _, ok := resp["result"]; !ok {
		t.Fatalf("process/start: got %v, want a result", resp)
	}
	// In flight when Close runs (or not yet read): either way Close must end it.
	c.Send(map[string]any{"jsonrpc": "2.0", "id": 2, "method": "process/read",
		"params": map[string]any{"processId": "p", "afterSeq": nil, "maxBytes": nil, "waitMs": 60000}})

	srv.Close()

	err, ok := returned(done)
	if !ok {
		t.Fatal("Close returned while ServeConn was still running, want it to wait")
	}
	if !errors.Is(err, executor.ErrServerClosed) {
		t.Errorf("ServeConn after Close: got %v, want ErrServerClosed", err)
	}
	if got := srv.SessionCount(); got != 0 {
		t.Errorf("sessions after Close: got %d, want 0", got)
	}
}

// TestServer_CloseEndsEveryConn: several idle connections all end before Close returns.
func TestServer_CloseEndsEveryConn(t *testing.T) {
	srv := executor.NewServer(nil)
	var dones []<-chan error
	for range 8 {
		c, done := serveAsync(t, srv)
		c.Handshake("")
		dones = append(dones, done)
	}
	srv.Close()
	for i, done := range dones {
		err, ok := returned(done)
		if !ok {
			t.Fatalf("conn %d: still served after Close returned", i)
		}
		if !errors.Is(err, executor.ErrServerClosed) {
			t.Errorf("conn %d: got %v, want ErrServerClosed", i, err)
		}
	}
}

// TestServer_ServeConnAfterCloseRefused: once Close has begun, ServeConn closes the
// MessageConn and returns ErrServerClosed at once.
func TestServer_ServeConnAfterCloseRefused(t *testing.T) {
	srv := executor.NewServer(nil)
	srv.Close()
	a, b := executortest.Pipe()
	err := srv.ServeConn(context.Background(), b, executor.ConnInfo{Transport: executor.TransportStdio})
	if !errors.Is(err, executor.ErrServerClosed) {
		t.Fatalf("ServeConn after Close: got %v, want ErrServerClosed", err)
	}
	if _, err := a.ReadMessage(context.Background()); !errors.Is(err, executortest.ErrClosed) {
		t.Errorf("client end after a refused ServeConn: got %v, want ErrClosed", err)
	}
}

// TestServer_CloseIdempotentAndConcurrent: concurrent and repeated Close calls all return,
// each after the connection has ended.
func TestServer_CloseIdempotentAndConcurrent(t *testing.T) {
	srv := executor.NewServer(nil)
	c, done := serveAsync(t, srv)
	c.Handshake("")
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			srv.Close()
		}()
	}
	wg.Wait()
	srv.Close()
	err, ok := returned(done)
	if !ok {
		t.Fatal("every Close call returned while ServeConn was still serving")
	}
	if !errors.Is(err, executor.ErrServerClosed) {
		t.Errorf("ServeConn: got %v, want ErrServerClosed", err)
	}
}

// TestServer_ServeConnCtxStillEndsConn: the caller's ctx still ends a connection on its own
// (not ErrServerClosed), and a later Close has nothing to wait for.
func TestServer_ServeConnCtxStillEndsConn(t *testing.T) {
	srv := executor.NewServer(nil)
	defer srv.Close()
	a, b := executortest.Pipe()
	defer a.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- srv.ServeConn(ctx, b, executor.ConnInfo{Transport: executor.TransportStdio})
	}()
	executortest.NewClient(t, a).Handshake("")
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("ServeConn after its ctx ended: got %v, want context.Canceled", err)
	}
}
