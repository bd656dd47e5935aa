package harness

import (
	"fmt"
	"strings"
	"testing"

	"github.com/execlab/executor/executor/protocol"
)

// TestOutputAcks_ThresholdFollowsFlowControl: the byte threshold is the current
// connection's: ackEveryBytes on a plain one, ackEveryBytesFlowControlled on a relay stream
// running ARQ (setFlowControlled), switching with the connection. An ack never covers a seq
// that was not consumed.
func TestOutputAcks_ThresholdFollowsFlowControl(t *testing.T) {
	chunk := strings.Repeat("A", 64<<10) // 64 KiB of base64 per notification
	output := func(seq uint64) Notification {
		return Notification{Method: protocol.MethodProcessOutput,
			Params: fmt.Appendf(nil, `{"processId":"p","seq":%d,"stream":"stdout","chunk":"%s"}`, seq, chunk)}
	}
	a := newOutputAcks()
	a.add("p")
	seq := uint64(0)
	// untilAck consumes notifications until one makes an ack due; it returns how many.
	untilAck := func() int {
		t.Helper()
		for n := 1; n <= 1000; n++ {
			seq++
			if msg := a.consumed(output(seq)); msg != nil {
				want := fmt.Sprintf(`{"method":"process/ack","params":{"processId":"p","seq":%d}}`, seq)
				if string(msg) != want {
					t.Fatalf("ack %s, want %s (the last consumed seq)", msg, want)
				}
				return n
			}
		}
		t.Fatal("no ack after 1,000 notifications")
		return 0
	}
	size := len(output(1).Params)
	for _, tc := range []struct {
		flowControlled bool
		threshold      int
	}{{false, ackEveryBytes}, {true, ackEveryBytesFlowControlled}, {false, ackEveryBytes}} {
		a.setFlowControlled(tc.flowControlled)
		want := (tc.threshold + size - 1) / size
		for range 3 {
			if got := untilAck(); got != want {
				t.Fatalf("flow-controlled %v: ack after %d notifications of %d bytes, want %d (threshold %d bytes)",
					tc.flowControlled, got, size, want, tc.threshold)
			}
		}
	}
}

// TestFlowControlled_OnlyARQConns: only the relay connection of an ARQ stream reports
// flow control; a plain MessageConn does not.
func TestFlowControlled_OnlyARQConns(t *testing.T) {
	if !flowControlled(arqChannelConn{}) {
		t.Error("an ARQ stream's connection is not flow-controlled")
	}
	if flowControlled(plainConn{}) {
		t.Error("a plain MessageConn is flow-controlled")
	}
}

// plainConn is a MessageConn without FlowControlled (only its type is looked at).
type plainConn struct{ MessageConn }
