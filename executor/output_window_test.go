package executor_test

import (
	"encoding/base64"
	"testing"
	"time"

	"github.com/execlab/executor/executor"
)

// TestServer_FlowControlledConnUsesItsWindow: a connection served with
// ConnInfo.FlowControlled (a relay stream running ARQ) gives lossless processes the
// FlowControlledOutputWindow; any other connection the OutputWindow. Nothing is
// acknowledged, so what arrives before the sender stops is the window (docs/reliability.md
// §4).
func TestServer_FlowControlledConnUsesItsWindow(t *testing.T) {
	const (
		plain = 64 << 10
		flow  = 1 << 20
		chunk = 256 << 10 // the largest read: an empty window admits one such chunk
	)
	for _, tc := range []struct {
		name           string
		flowControlled bool
		min, max       int
	}{
		{"plain", false, 1, plain + chunk},
		{"flow-controlled", true, plain + chunk + 1, flow},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, &executor.Options{MaxUnackedBytes: 4 << 20, OutputWindow: plain, FlowControlledOutputWindow: flow})
			c := h.dialInfo(executor.ConnInfo{Transport: executor.TransportRelay, FlowControlled: tc.flowControlled})
			c.Handshake("")
			p := startParams("p", "head", "-c", "8388608", "/dev/zero")
			p["outputAck"] = true
			if resp, _ := c.Call(1, "process/start", p); resp["result"] == nil {
				t.Fatalf("start: %v", resp)
			}
			pushed := 0
			for deadline := time.Now().Add(10 * time.Second); ; {
				m, err := c.TryRecv(300 * time.Millisecond)
				if err != nil {
					break // quiet: the sender waits for acknowledgements
				}
				if time.Now().After(deadline) {
					t.Fatalf("output kept coming for 10 s without acknowledgements (%d bytes)", pushed)
				}
				if m["method"] != "process/output" {
					t.Fatalf("got %v before any acknowledgement", m)
				}
				b, err := base64.StdEncoding.DecodeString(m["params"].(map[string]any)["chunk"].(string))
				if err != nil {
					t.Fatal(err)
				}
				pushed += len(b)
			}
			if pushed < tc.min || pushed > tc.max {
				t.Fatalf("pushed %d bytes unacknowledged, want %d to %d", pushed, tc.min, tc.max)
			}
		})
	}
}
