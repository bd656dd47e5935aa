package jsonrpc_test

import (
	"context"
	"testing"
	"testing/synctest"

	"github.com/execlab/executor/executor/executortest"
	"github.com/execlab/executor/executor/jsonrpc"
)

// TestConn_TryNotifyKeepsReserve: best-effort notifications never wait; they are dropped
// once fewer than BestEffortReserve outbound slots are free, which ordinary Notify calls
// can still use.
func TestConn_TryNotifyKeepsReserve(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, b := executortest.Pipe()
		g := &gatedConn{End: b, gate: make(chan struct{})}
		conn := jsonrpc.NewConn(g, nil)
		done := make(chan error, 1)
		go func() { done <- conn.Run(context.Background(), &fakeHandler{}) }()
		defer func() { a.Close(); <-done }()
		if !conn.TryNotify("audit", map[string]int{"n": 0}) {
			t.Fatal("first TryNotify dropped")
		}
		synctest.Wait() // the writer holds the first message, blocked on the gate
		sent := 0
		for i := 0; i < jsonrpc.OutboundQueue; i++ {
			if conn.TryNotify("audit", map[string]int{"n": i}) {
				sent++
			}
		}
		// Accepted while at least BestEffortReserve slots are free before the push.
		if want := jsonrpc.OutboundQueue - jsonrpc.BestEffortReserve + 1; sent != want {
			t.Errorf("queued %d best-effort notifications, want %d", sent, want)
		}
		for range jsonrpc.BestEffortReserve - 1 {
			if err := conn.Notify(context.Background(), "control", nil); err != nil {
				t.Fatalf("Notify into the reserve: %v", err)
			}
		}
	})
}
