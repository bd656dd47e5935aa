package jsonrpc_test

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/execlab/executor/executor/executortest"
	"github.com/execlab/executor/executor/jsonrpc"
	"github.com/execlab/executor/jsonwire"
)

// fakeHandler answers "echo" with its params, blocks "wait" until released, and treats
// "control/*" as the control lane.
type fakeHandler struct {
	release chan struct{}
	mu      sync.Mutex
	notes   []string
}

func (h *fakeHandler) Lane(method string) jsonrpc.Lane {
	switch method {
	case "serial":
		return jsonrpc.LaneSerial
	case "control/x":
		return jsonrpc.LaneControl
	}
	return jsonrpc.LaneOrdinary
}

func (h *fakeHandler) Handle(ctx context.Context, req *jsonrpc.Message) (any, error) {
	switch req.Method {
	case "wait":
		select {
		case <-h.release:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		return map[string]string{"waited": "yes"}, nil
	case "fail":
		return nil, jsonwire.InvalidParams("bad thing")
	case "plain-error":
		return nil, errors.New("boom")
	case "close":
		return nil, jsonrpc.ErrClose
	}
	return json.RawMessage(req.Params), nil
}

func (h *fakeHandler) HandleNotification(_ context.Context, n *jsonrpc.Message) error {
	if n.Method == "bye" {
		return jsonrpc.ErrClose
	}
	h.mu.Lock()
	h.notes = append(h.notes, n.Method)
	h.mu.Unlock()
	return nil
}

// served is a running connection; done is closed when Run has returned, with err set.
type served struct {
	done chan struct{}
	err  error
}

func serve(t *testing.T, opts *jsonrpc.Options, h jsonrpc.Handler) (*executortest.Client, *jsonrpc.Conn, *served) {
	t.Helper()
	a, b := executortest.Pipe()
	conn := jsonrpc.NewConn(b, opts)
	s := &served{done: make(chan struct{})}
	go func() { // ends when the pipe closes
		s.err = conn.Run(context.Background(), h)
		close(s.done)
	}()
	c := executortest.NewClient(t, a)
	t.Cleanup(func() {
		c.Close()
		<-s.done
	})
	return c, conn, s
}

func TestConn_SerialByDefault(t *testing.T) {
	h := &fakeHandler{release: make(chan struct{})}
	c, _, _ := serve(t, nil, h)
	c.Send(`{"id":1,"method":"wait"}`)
	c.Send(`{"id":2,"method":"echo","params":{"a":1}}`)
	if m, err := c.TryRecv(100 * time.Millisecond); err == nil {
		t.Fatalf("got %v before the first request finished, want nothing (serial)", m)
	}
	close(h.release)
	if m := c.Recv(); m["id"] != float64(1) {
		t.Fatalf("got %v, want id 1 first", m)
	}
	if m := c.Recv(); m["id"] != float64(2) || m["result"].(map[string]any)["a"] != float64(1) {
		t.Fatalf("got %v, want echo of id 2", m)
	}
}

func TestConn_ControlLaneAnswersDuringLongRequest(t *testing.T) {
	h := &fakeHandler{release: make(chan struct{})}
	c, _, _ := serve(t, &jsonrpc.Options{ConcurrentRequests: 2}, h)
	c.Send(`{"id":1,"method":"wait"}`)
	c.Send(`{"id":2,"method":"control/x","params":{}}`)
	if m := c.Recv(); m["id"] != float64(2) {
		t.Fatalf("got %v, want the control request answered first", m)
	}
	close(h.release)
	if m := c.Recv(); m["id"] != float64(1) {
		t.Fatalf("got %v, want id 1", m)
	}
}

func TestConn_ErrorsAndIDs(t *testing.T) {
	c, _, _ := serve(t, &jsonrpc.Options{ParseErrorPrefix: "failed to parse X"}, &fakeHandler{})
	c.Send(`{"id":"s","method":"fail"}`)
	m := c.Recv()
	if m["id"] != "s" || m["error"].(map[string]any)["code"] != float64(-32602) {
		t.Fatalf("got %v", m)
	}
	if _, has := m["jsonrpc"]; has {
		t.Fatalf("response carries a jsonrpc member: %v", m)
	}
	c.Send(`{"id":7,"method":"plain-error"}`)
	if m := c.Recv(); m["error"].(map[string]any)["code"] != float64(-32603) || m["error"].(map[string]any)["message"] != "boom" {
		t.Fatalf("got %v, want -32603 boom", m)
	}
	c.Send(`garbage`)
	m = c.Recv()
	e := m["error"].(map[string]any)
	if m["id"] != float64(-1) || e["code"] != float64(-32600) || len(e["message"].(string)) < len("failed to parse X: ") || e["message"].(string)[:19] != "failed to parse X: " {
		t.Fatalf("got %v", m)
	}
	c.Send(`{"id":8,"method":"echo"}`)
	if m := c.Recv(); m["id"] != float64(8) {
		t.Fatalf("connection did not survive malformed input: %v", m)
	}
}

func TestConn_CloseCases(t *testing.T) {
	for _, msg := range []string{`{"id":9,"result":{}}`, `{"id":9,"error":{"code":1,"message":"x"}}`, `{"method":"bye"}`, `{"id":1,"method":"close"}`} {
		t.Run(msg, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				c, _, s := serve(t, nil, &fakeHandler{})
				c.Send(msg)
				<-s.done // a connection that stays open deadlocks the bubble: a failure
				if s.err != nil {
					t.Fatalf("Run returned %v, want nil", s.err)
				}
				// Fake time: the 50 ms pass only once every goroutine is blocked.
				if m, err := c.TryRecv(50 * time.Millisecond); err == nil {
					t.Fatalf("got reply %v, want none", m)
				}
			})
		})
	}
}

type thenHandler struct{ conn *jsonrpc.Conn }

func (h *thenHandler) Lane(string) jsonrpc.Lane { return jsonrpc.LaneSerial }
func (h *thenHandler) HandleNotification(context.Context, *jsonrpc.Message) error {
	return nil
}
func (h *thenHandler) Handle(ctx context.Context, req *jsonrpc.Message) (any, error) {
	return jsonrpc.Then(map[string]int{"status": 200}, func() {
		_ = h.conn.Notify(ctx, "stream/delta", map[string]int{"seq": 1})
	}), nil
}

func TestConn_ThenRunsAfterResponseIsQueued(t *testing.T) {
	a, b := executortest.Pipe()
	conn := jsonrpc.NewConn(b, nil)
	h := &thenHandler{conn: conn}
	done := make(chan error, 1)
	go func() { done <- conn.Run(context.Background(), h) }()
	c := executortest.NewClient(t, a)
	defer func() { c.Close(); <-done }()
	c.Send(`{"id":1,"method":"x"}`)
	if m := c.Recv(); m["id"] != float64(1) {
		t.Fatalf("got %v first, want the response", m)
	}
	if m := c.Recv(); m["method"] != "stream/delta" {
		t.Fatalf("got %v, want the notification after the response", m)
	}
}

func TestConn_NotifyFailsAfterClose(t *testing.T) {
	a, b := executortest.Pipe()
	conn := jsonrpc.NewConn(b, nil)
	done := make(chan error, 1)
	go func() { done <- conn.Run(context.Background(), &fakeHandler{}) }()
	a.Close()
	<-done
	if err := conn.Notify(context.Background(), "x", nil); !errors.Is(err, jsonrpc.ErrConnClosed) {
		t.Fatalf("Notify after close: got %v, want ErrConnClosed", err)
	}
}

// gatedConn is a MessageConn whose writes block until released, to fill the queue.
type gatedConn struct {
	*executortest.End
	gate chan struct{}
}

func (g *gatedConn) WriteMessage(ctx context.Context, b []byte) error {
	select {
	case <-g.gate:
	case <-ctx.Done():
		return ctx.Err()
	}
	return g.End.WriteMessage(ctx, b)
}

func TestConn_NotifyWaitsForByteBudget(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, b := executortest.Pipe()
		g := &gatedConn{End: b, gate: make(chan struct{})}
		conn := jsonrpc.NewConn(g, nil)
		done := make(chan error, 1)
		go func() { done <- conn.Run(context.Background(), &fakeHandler{}) }()
		defer func() { a.Close(); <-done }()
		big := json.RawMessage(`"` + strings.Repeat("x", jsonrpc.OutboundBytes/4) + `"`)
		ctx := context.Background()
		// The writer takes the first message and blocks in WriteMessage; it still counts.
		for i := 0; i < 3; i++ {
			if err := conn.Notify(ctx, "big", big); err != nil {
				t.Fatal(err)
			}
		}
		blocked := make(chan error, 1)
		go func() { blocked <- conn.Notify(ctx, "big", big) }() // over budget: must wait
		synctest.Wait()                                         // every goroutine of the bubble is blocked: the writer, and Notify
		select {
		case err := <-blocked:
			t.Fatalf("fourth notification queued over the byte budget (err %v)", err)
		default:
		}
		g.gate <- struct{}{} // one message written frees its bytes
		if err := <-blocked; err != nil {
			t.Fatal(err)
		}
		close(g.gate)
		c := executortest.NewClient(t, a)
		for i := 0; i < 4; i++ {
			if m := c.Recv(); m["method"] != "big" {
				t.Fatalf("got %v", m["method"])
			}
		}
	})
}

// countingConn counts the messages the connection has read from the peer.
type countingConn struct {
	*executortest.End
	mu    sync.Mutex
	reads int
}

func (c *countingConn) ReadMessage(ctx context.Context) ([]byte, error) {
	b, err := c.End.ReadMessage(ctx)
	if err == nil {
		c.mu.Lock()
		c.reads++
		c.mu.Unlock()
	}
	return b, err
}

func (c *countingConn) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.reads
}

// While a serial request blocks dispatch, the read loop stops taking large messages once
// InboundBytes is queued (issue 13: bounded by count alone, 40 queued 16 MiB messages
// pinned 1.14 GB); releasing the handler lets the rest through, in order.
func TestConn_InboundWaitsForByteBudget(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, b := executortest.Pipe()
		cc := &countingConn{End: b}
		h := &fakeHandler{release: make(chan struct{})}
		conn := jsonrpc.NewConn(cc, nil)
		done := make(chan error, 1)
		go func() { done <- conn.Run(context.Background(), h) }()
		defer func() { a.Close(); <-done }()
		ctx := context.Background()
		if err := a.WriteMessage(ctx, []byte(`{"id":0,"method":"wait"}`)); err != nil {
			t.Fatal(err)
		}
		const n = 8
		big := `"` + strings.Repeat("x", jsonrpc.InboundBytes/4) + `"`
		sent := make(chan error, 1)
		go func() { // the peer keeps writing; the pipe blocks it once we stop reading
			for i := 1; i <= n; i++ {
				if err := a.WriteMessage(ctx, []byte(`{"id":`+strconv.Itoa(i)+`,"method":"fail","params":`+big+`}`)); err != nil {
					sent <- err
					return
				}
			}
			sent <- nil
		}()
		synctest.Wait() // the read loop has run as far as it can: it waits for admission
		// wait + 4 messages within the budget + the one waiting for admission.
		t.Logf("COUNT %d", cc.count())
		if got := cc.count(); got > 6 {
			t.Fatalf("read %d messages while dispatch was blocked, want at most 6 (byte budget %d)", got, jsonrpc.InboundBytes)
		}
		close(h.release)
		c := executortest.NewClient(t, a)
		for i := 0; i <= n; i++ {
			m := c.Recv()
			if id, _ := m["id"].(float64); int(id) != i {
				t.Fatalf("reply %d has id %v", i, m["id"])
			}
		}
		if err := <-sent; err != nil {
			t.Fatal(err)
		}
	})
}

// releasingConn records the messages the connection gives back (jsonrpc.MessageReleaser).
type releasingConn struct {
	*executortest.End
	mu       sync.Mutex
	released []string
}

func (c *releasingConn) ReleaseMessage(data []byte) {
	c.mu.Lock()
	c.released = append(c.released, string(data))
	c.mu.Unlock()
}

// releasingHandler says requests of method "drop" keep nothing of their message.
type releasingHandler struct{ fakeHandler }

func (h *releasingHandler) ReleasesMessage(method string) bool { return method == "drop" }

// A request whose handler keeps nothing of its message gives the bytes back to a
// MessageReleaser after its reply is encoded (the id in the reply is intact); others are
// never given back.
func TestConn_ReleasesHandledMessages(t *testing.T) {
	a, b := executortest.Pipe()
	rc := &releasingConn{End: b}
	conn := jsonrpc.NewConn(rc, nil)
	done := make(chan error, 1)
	go func() { done <- conn.Run(context.Background(), &releasingHandler{}) }()
	defer func() { a.Close(); <-done }()
	c := executortest.NewClient(t, a)
	drop, echo := `{"id":"req-7","method":"drop","params":{"a":1}}`, `{"id":8,"method":"echo","params":{"b":2}}`
	for _, m := range []string{drop, echo, drop} {
		if err := a.WriteMessage(context.Background(), []byte(m)); err != nil {
			t.Fatal(err)
		}
	}
	for _, want := range []any{"req-7", float64(8), "req-7"} {
		if m := c.Recv(); m["id"] != want {
			t.Fatalf("reply %v, want id %v", m, want)
		}
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if len(rc.released) != 2 || rc.released[0] != drop || rc.released[1] != drop {
		t.Fatalf("released %q, want the two drop requests", rc.released)
	}
}
