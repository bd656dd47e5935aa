package jsonrpc_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/execlab/executor/executor/executortest"
	"github.com/execlab/executor/executor/jsonrpc"
)

// recordingObserver records the queues of Backpressure calls.
type recordingObserver struct {
	mu     sync.Mutex
	queues []string
}

func (o *recordingObserver) Backpressure(queue string, d time.Duration) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.queues = append(o.queues, queue)
}

func (o *recordingObserver) got() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]string(nil), o.queues...)
}

// TestConn_QueueStats: notifications held by a peer that does not read show in
// QueueStats (bytes, including the one being written, and messages still queued); a
// Notify over the byte budget waits, and its wait is reported once as outbound
// back-pressure; once the peer reads, the queue is empty again.
func TestConn_QueueStats(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, b := executortest.Pipe()
		g := &gatedConn{End: b, gate: make(chan struct{})}
		obs := &recordingObserver{}
		conn := jsonrpc.NewConn(g, &jsonrpc.Options{Observer: obs})
		done := make(chan error, 1)
		go func() { done <- conn.Run(context.Background(), &fakeHandler{}) }()
		defer func() { a.Close(); <-done }()
		big := json.RawMessage(`"` + strings.Repeat("x", jsonrpc.OutboundBytes/4) + `"`)
		ctx := context.Background()
		for range 3 {
			if err := conn.Notify(ctx, "big", big); err != nil {
				t.Fatal(err)
			}
		}
		synctest.Wait() // the writer took the first message and blocks in WriteMessage
		s := conn.QueueStats()
		if s.OutboundMessages != 2 || s.OutboundBytes < 3*jsonrpc.OutboundBytes/4 || s.InboundBytes != 0 {
			t.Fatalf("QueueStats with 3 notifications held: got %+v, want 2 messages queued, >= %d bytes, 0 inbound", s, 3*jsonrpc.OutboundBytes/4)
		}
		blocked := make(chan error, 1)
		go func() { blocked <- conn.Notify(ctx, "big", big) }() // over budget: waits
		synctest.Wait()
		if got := obs.got(); len(got) != 0 {
			t.Fatalf("back-pressure reported while still waiting: %v", got)
		}
		close(g.gate)
		if err := <-blocked; err != nil {
			t.Fatal(err)
		}
		c := executortest.NewClient(t, a)
		for range 4 {
			if m := c.Recv(); m["method"] != "big" {
				t.Fatalf("got %v", m["method"])
			}
		}
		synctest.Wait()
		if got := obs.got(); len(got) != 1 || got[0] != jsonrpc.QueueOutbound {
			t.Errorf("back-pressure reports: got %v, want [%s]", got, jsonrpc.QueueOutbound)
		}
		if s := conn.QueueStats(); s != (jsonrpc.QueueStats{}) {
			t.Errorf("QueueStats once the peer read everything: got %+v, want zero", s)
		}
	})
}
