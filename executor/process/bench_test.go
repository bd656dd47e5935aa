package process_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"testing"

	"github.com/execlab/executor/executor/jsonrpc"
	"github.com/execlab/executor/executor/process"
	"github.com/execlab/executor/executor/protocol"
)

// encodingNotifier stands in for a connection: it encodes every notification the way
// the connection does (AppendJSON when available) into a reused buffer, and tracks the
// decoded output bytes and the close of one process.
type encodingNotifier struct {
	buf    []byte
	bytes  int64
	chunks int
	zeros  bool // every output byte seen so far was 0
	closed chan uint64
}

func (e *encodingNotifier) Notify(ctx context.Context, method string, params any) error {
	e.buf = e.buf[:0]
	if a, ok := params.(jsonrpc.AppendJSONer); ok {
		e.buf = a.AppendJSON(e.buf)
	}
	switch p := params.(type) {
	case *protocol.ProcessOutputNotification:
		e.bytes += int64(len(p.Chunk))
		e.chunks++
		for _, c := range p.Chunk {
			if c != 0 {
				e.zeros = false
				break
			}
		}
	case *protocol.ProcessClosedNotification:
		e.closed <- p.Seq
	}
	return nil
}

// BenchmarkStart_TrueToClosed measures one-shot /bin/true start → closed notification.
func BenchmarkStart_TrueToClosed(b *testing.B) {
	m := process.NewManager(nil)
	defer m.Close()
	n := &encodingNotifier{closed: make(chan uint64, 1)}
	m.Attach(n)
	cwd := protocol.FromNative(b.TempDir())
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		id := fmt.Sprintf("b%d", i)
		if _, err := m.Start(context.Background(), startParams(id, cwd, "/bin/true")); err != nil {
			b.Fatal(err)
		}
		<-n.closed
	}
}

// BenchmarkStdoutThroughput pumps `head -c 256M /dev/zero` through notifications
// (encoded with AppendJSON) and verifies every byte. It reports the mean chunk size
// (B/chunk): one chunk is one notification, so small chunks are per-message cost
// (issue 16, pauseAfterRead).
func BenchmarkStdoutThroughput(b *testing.B) {
	const size = 256 << 20
	m := process.NewManager(nil)
	defer m.Close()
	cwd := protocol.FromNative(b.TempDir())
	b.SetBytes(size)
	for i := 0; b.Loop(); i++ {
		n := &encodingNotifier{closed: make(chan uint64, 1), zeros: true, buf: make([]byte, 0, 128<<10)}
		m.Attach(n)
		id := fmt.Sprintf("t%d", i)
		if _, err := m.Start(context.Background(), startParams(id, cwd, "head", "-c", "256M", "/dev/zero")); err != nil {
			b.Fatal(err)
		}
		<-n.closed
		if n.bytes != size || !n.zeros {
			b.Fatalf("got %d bytes (all zero: %v), want %d zero bytes", n.bytes, n.zeros, size)
		}
		b.ReportMetric(float64(n.bytes)/float64(n.chunks), "B/chunk")
	}
}

// The output notification encoder must not allocate beyond its destination buffer.
func TestOutputNotification_AppendJSONAllocs(t *testing.T) {
	n := &protocol.ProcessOutputNotification{ProcessID: "proc-1", Seq: 7, Stream: protocol.StreamStdout, Chunk: make([]byte, 64<<10)}
	buf := make([]byte, 0, 128<<10)
	allocs := testing.AllocsPerRun(100, func() { buf = n.AppendJSON(buf[:0]) })
	if allocs != 0 {
		t.Fatalf("AppendJSON allocs = %v, want 0", allocs)
	}
	want := `{"processId":"proc-1","seq":7,"stream":"stdout","chunk":"` + base64.StdEncoding.EncodeToString(n.Chunk) + `"}`
	if string(buf) != want {
		t.Fatalf("AppendJSON mismatch (len %d, want %d)", len(buf), len(want))
	}
}
