package bench

import (
	"encoding/base64"
	"errors"
	"fmt"
	"testing"

	"github.com/execlab/executor/executor/protocol"
	"github.com/execlab/executor/harness"
)

func outputNote(seq uint64, stream string, chunk []byte) harness.Notification {
	return harness.Notification{Method: protocol.MethodProcessOutput, Params: fmt.Appendf(nil,
		`{"processId":"p","seq":%d,"stream":%q,"chunk":%q}`, seq, stream, base64.StdEncoding.EncodeToString(chunk))}
}

func exitedNote(seq uint64, code int) harness.Notification {
	return harness.Notification{Method: protocol.MethodProcessExited, Params: fmt.Appendf(nil, `{"processId":"p","seq":%d,"exitCode":%d}`, seq, code)}
}

func closedNote(seq uint64) harness.Notification {
	return harness.Notification{Method: protocol.MethodProcessClosed, Params: fmt.Appendf(nil, `{"processId":"p","seq":%d}`, seq)}
}

// feed runs notes through a processRun for process "p" and reports whether it finished.
func feed(t *testing.T, r *processRun, notes ...harness.Notification) bool {
	t.Helper()
	if err := r.init("p"); err != nil {
		t.Fatal(err)
	}
	for _, n := range notes {
		r.handle(n)
	}
	select {
	case <-r.done:
		return true
	default:
		return false
	}
}

// TestProcessRun_OrdersEventsAndRejectsDuplicates: an exit and close overtaking output
// (as the reference sends them) complete the run with output in seq order; a repeated seq,
// a seq 0 or a seq past the close is data loss; a missing seq never completes it.
func TestProcessRun_OrdersEventsAndRejectsDuplicates(t *testing.T) {
	var got []uint64
	r := &processRun{onOutput: func(o protocol.ProcessOutputNotification) error {
		if o.ProcessID != "p" || string(o.Chunk) != fmt.Sprint(o.Seq) {
			return fmt.Errorf("chunk %q of %s seq %d", o.Chunk, o.ProcessID, o.Seq)
		}
		got = append(got, o.Seq)
		return nil
	}}
	if !feed(t, r, exitedNote(3, 7), outputNote(2, "stdout", []byte("2")), closedNote(4), outputNote(1, "stderr", []byte("1"))) {
		t.Fatal("run with every seq did not finish")
	}
	if r.firstErr != nil || r.out.exitCode != 7 || r.out.lastSeq != 4 || fmt.Sprint(got) != "[1 2]" {
		t.Errorf("got err %v exit %d close %d output %v, want nil, 7, 4, [1 2]", r.firstErr, r.out.exitCode, r.out.lastSeq, got)
	}

	for name, notes := range map[string][]harness.Notification{
		"delivered seq repeated": {outputNote(1, "stdout", nil), outputNote(1, "stdout", nil), exitedNote(2, 0), closedNote(3)},
		"pending seq repeated":   {exitedNote(2, 0), exitedNote(2, 0), outputNote(1, "stdout", nil), closedNote(3)},
		"seq 0":                  {outputNote(0, "stdout", nil), exitedNote(1, 0), closedNote(2)},
		"seq past the close":     {outputNote(4, "stdout", nil), exitedNote(1, 0), closedNote(2)},
		"closed without exit":    {outputNote(1, "stdout", nil), closedNote(2)},
		"exited twice":           {exitedNote(1, 0), exitedNote(2, 0), closedNote(3)},
	} {
		r := &processRun{}
		if !feed(t, r, notes...) {
			t.Errorf("%s: run did not finish", name)
		} else if !errors.Is(r.firstErr, errDataLoss) {
			t.Errorf("%s: got %v, want data loss", name, r.firstErr)
		}
	}
	if feed(t, &processRun{}, exitedNote(2, 0), closedNote(3)) {
		t.Error("run missing seq 1 finished")
	}
}

// TestProcessRun_SinkOrdersWithoutDecoding: with a sink (stdout_parallel), chunks are
// checked and counted by the sink, seqs still ordered and checked; a bad chunk fails the
// run once every seq has arrived.
func TestProcessRun_SinkOrdersWithoutDecoding(t *testing.T) {
	var n int64
	r := &processRun{sink: zeroOutputSink(&n)}
	if !feed(t, r, outputNote(2, "stdout", make([]byte, 5)), exitedNote(3, 0), outputNote(1, "stdout", make([]byte, 4)), closedNote(4)) {
		t.Fatal("run with every seq did not finish")
	}
	if r.firstErr != nil || n != 9 || r.out.lastSeq != 4 {
		t.Errorf("got err %v, %d bytes, close %d; want nil, 9, 4", r.firstErr, n, r.out.lastSeq)
	}
	for name, notes := range map[string][]harness.Notification{
		"non-zero chunk": {outputNote(1, "stdout", []byte{1}), exitedNote(2, 0), closedNote(3)},
		"stderr chunk":   {outputNote(1, "stderr", []byte{0}), exitedNote(2, 0), closedNote(3)},
		"repeated seq":   {outputNote(1, "stdout", []byte{0}), outputNote(1, "stdout", []byte{0}), exitedNote(2, 0), closedNote(3)},
	} {
		r := &processRun{sink: zeroOutputSink(new(int64))}
		if !feed(t, r, notes...) {
			t.Errorf("%s: run did not finish", name)
		} else if !errors.Is(r.firstErr, errDataLoss) {
			t.Errorf("%s: got %v, want data loss", name, r.firstErr)
		}
	}
}
