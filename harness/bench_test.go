package harness

import (
	"bytes"
	"encoding/json"
	"strconv"
	"testing"

	"github.com/execlab/executor/executor/protocol"
)

// BenchmarkDecodeProcessOutput measures the client's cost per 8 KiB process/output
// message (envelope scan + params decode), the path stdout_local depends on.
func BenchmarkDecodeProcessOutput(b *testing.B) {
	params, _ := json.Marshal(protocol.ProcessOutputNotification{ProcessID: "bench-stdout-1", Seq: 12345, Stream: protocol.StreamStdout, Chunk: make([]byte, 8192)})
	msg := append(append([]byte(`{"method":"process/output","params":`), params...), '}')
	b.SetBytes(8192)
	for b.Loop() {
		m, err := parseMessage(msg)
		if err != nil {
			b.Fatal(err)
		}
		out, err := Notification{Method: m.method, Params: m.params, scanned: true}.ProcessOutput()
		if err != nil || !bytes.Equal(out.Chunk, make([]byte, 8192)) {
			b.Fatal(err)
		}
	}
}

// outputMessage is one process/output message as executors send it (processId first),
// carrying n zero bytes.
func outputMessage(pid string, seq uint64, n int) []byte {
	params, _ := json.Marshal(protocol.ProcessOutputNotification{ProcessID: pid, Seq: seq, Stream: protocol.StreamStdout, Chunk: make([]byte, n)})
	return append(append([]byte(`{"method":"process/output","params":`), params...), '}')
}

// BenchmarkProcessEvents_256KiB measures what a harness spends per 256 KiB
// process/output (our executor's largest chunk, the relay_stream case) between the
// decrypted message and the chunk in the consumer's hands: envelope scan, ProcessID (as
// a router calls it) and ProcessEvents.Add (issue 16).
func BenchmarkProcessEvents_256KiB(b *testing.B) {
	const size = 256 << 10
	msg := outputMessage("bench-relay-1", 1e9, size)
	ev := NewProcessEvents("bench-relay-1")
	var batch []ProcessEvent
	b.SetBytes(size)
	b.ReportAllocs()
	seq := uint64(0)
	for b.Loop() {
		seq++
		binaryPatchSeq(msg, seq)
		batch = processOne(b, ev, batch[:0], msg)
		if len(batch) != 1 || len(batch[0].Chunk) != size {
			b.Fatalf("got %d events", len(batch))
		}
	}
}

// TestProcessEvents_Allocs pins the receive path's allocations per process/output: the
// chunk and the processId string, nothing per byte beyond the chunk itself.
func TestProcessEvents_Allocs(t *testing.T) {
	msg := outputMessage("p", 1000, 256<<10)
	ev := NewProcessEvents("p")
	var batch []ProcessEvent
	seq := uint64(0)
	allocs := testing.AllocsPerRun(20, func() {
		seq++
		binaryPatchSeq(msg, seq)
		batch = processOne(t, ev, batch[:0], msg)
	})
	// The chunk, ProcessID's id string, the decoder's id string and the pending-map entry;
	// under the race detector, a refill of jsonwire's scanner pool (scanner and stack).
	if allocs > 4+scannerRefill {
		t.Errorf("got %v allocations per 256 KiB process/output, want at most 4", allocs)
	}
}

func processOne(tb testing.TB, ev *ProcessEvents, dst []ProcessEvent, msg []byte) []ProcessEvent {
	m, err := parseMessage(msg)
	if err != nil {
		tb.Fatal(err)
	}
	n := Notification{Method: m.method, Params: m.params, scanned: true} // as the Client makes it
	if _, ok := n.ProcessID(); !ok {
		tb.Fatal("no processId")
	}
	out, err := ev.Add(dst, n)
	if err != nil {
		tb.Fatal(err)
	}
	return out
}

// binaryPatchSeq rewrites the seq of an outputMessage in place, padded with spaces to the
// original width (build it with a seq of as many digits as the largest one written).
func binaryPatchSeq(msg []byte, seq uint64) {
	i := bytes.Index(msg, []byte(`"seq":`)) + len(`"seq":`)
	j := i + bytes.IndexByte(msg[i:], ',')
	s := []byte(strconv.FormatUint(seq, 10))
	copy(msg[i:j], bytes.Repeat([]byte{' '}, j-i-len(s)))
	copy(msg[j-len(s):j], s)
}
