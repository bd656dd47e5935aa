package harness_test

import (
	"context"
	"testing"
	"time"

	"github.com/execlab/executor/executor/protocol"
	"github.com/execlab/executor/harness"
)

// BenchmarkStdoutAck measures the cost of acknowledged output (docs/reliability.md): 64 MiB
// of `head -c` stdout from our executor over a local WebSocket, consumed through
// Notifications, with outputAck (sub-benchmark "ack") and without ("noack"). The local
// path is faster than the relay, so the ratio is an upper bound of the relay's cost.
//
//	go test ./harness -run XXX -bench StdoutAck -count 5
func BenchmarkStdoutAck(b *testing.B) {
	const size = 64 << 20
	url := startServer(b, servers[0])
	for _, mode := range []struct {
		name    string
		disable bool
	}{{"ack", false}, {"noack", true}} {
		b.Run(mode.name, func(b *testing.B) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
			defer cancel()
			c, err := harness.DialLocal(ctx, url, &harness.Options{DisableOutputAck: mode.disable})
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			if _, err := c.Initialize(ctx, "bench", ""); err != nil {
				b.Fatal(err)
			}
			b.SetBytes(size)
			i := 0
			for b.Loop() {
				i++
				pid := "p" + itoa(i)
				if _, err := c.StartProcess(ctx, protocol.ProcessStartParams{ProcessID: pid,
					Argv: []string{"head", "-c", itoa(size), "/dev/zero"}, Cwd: protocol.FromNative("/"),
					Env: map[string]string{"PATH": "/usr/bin:/bin"}}); err != nil {
					b.Fatal(err)
				}
				got, chunks := 0, 0
				evs := harness.NewProcessEvents(pid)
				var batch []harness.ProcessEvent
				for !evs.Done() {
					n, ok := <-c.Notifications()
					if !ok {
						b.Fatal(c.Err())
					}
					if batch, err = evs.Add(batch[:0], n); err != nil {
						b.Fatal(err)
					}
					for _, ev := range batch {
						got += len(ev.Chunk)
						chunks++
					}
				}
				b.ReportMetric(float64(size)/float64(chunks), "B/chunk")
				if got != size {
					b.Fatalf("got %d bytes, want %d", got, size)
				}
			}
		})
	}
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b [20]byte
	i := len(b)
	for n > 0 {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
	}
	return string(b[i:])
}
