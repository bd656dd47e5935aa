package executor_test

import (
	"encoding/json"
	"sync/atomic"
	"testing"

	"github.com/execlab/executor/executor"
)

// TestConnInfo_OnSandboxedNetworkStart: the hook runs once per process/start that passed
// the handshake checks and whose sandbox enables the network; not for a restricted
// network, no sandbox, or a start refused before initialize.
func TestConnInfo_OnSandboxedNetworkStart(t *testing.T) {
	var calls atomic.Int32
	h := newHarness(t, &executor.Options{})
	c := h.dialInfo(executor.ConnInfo{Transport: executor.TransportRelay, OnSandboxedNetworkStart: func() { calls.Add(1) }})
	sandboxed := func(id, network string) map[string]any {
		p := startParams(id, "true")
		var sb map[string]any
		if err := json.Unmarshal([]byte(`{"permissions":{"type":"managed","network":"`+network+
			`","file_system":{"type":"restricted","entries":[]}},"windowsSandboxLevel":"disabled"}`), &sb); err != nil {
			t.Fatal(err)
		}
		p["sandbox"] = sb
		return p
	}
	if resp, _ := c.Call(1, "process/start", sandboxed("early", "enabled")); resp["error"] == nil {
		t.Fatalf("process/start before initialize: %v", resp)
	}
	c.Handshake("")
	c.Call(2, "process/start", sandboxed("a", "enabled"))
	c.Call(3, "process/start", sandboxed("b", "restricted"))
	c.Call(4, "process/start", startParams("c", "true"))
	if n := calls.Load(); n != 1 {
		t.Fatalf("hook called %d times, want 1", n)
	}
}
