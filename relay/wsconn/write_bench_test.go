package wsconn_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/execlab/executor/relay/wsconn"
)

// threadCPU returns the calling thread's user + system time (RUSAGE_THREAD); the caller
// holds its thread (runtime.LockOSThread).
func threadCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(1 /* RUSAGE_THREAD */, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkWriteRecordFrame writes relay frames carrying one full Noise record (a 60-byte
// frame head, the 61,456-byte record as its tail) on a dialled ws:// connection to a loopback
// server that reads and discards them, through the Conn's own masked frames (raw) and through
// the websocket library with the cork (library: the head and record joined first, as
// relay/mux did before SplitFrameWriter). cpu-ns/op is the writing thread's CPU time per
// frame (RUSAGE_THREAD: the copies, the masking and the write syscall with the loopback's
// kernel work), which a shared machine inflates far less than wall time (issue 16).
func BenchmarkWriteRecordFrame(b *testing.B) {
	for _, raw := range []bool{true, false} {
		name := "library"
		if raw {
			name = "raw"
		}
		b.Run(name, func(b *testing.B) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				c, err := websocket.Accept(w, r, nil)
				if err != nil {
					return
				}
				defer c.CloseNow()
				c.SetReadLimit(1 << 20)
				for {
					_, rd, err := c.Reader(r.Context())
					if err != nil {
						return
					}
					if _, err := io.Copy(io.Discard, rd); err != nil {
						return
					}
				}
			}))
			defer srv.Close()
			ctx := context.Background()
			c, err := wsconn.Dial(ctx, "ws"+strings.TrimPrefix(srv.URL, "http")+"/rendezvous", nil)
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			wsconn.SetRawFramesForTest(c, raw)
			measureRecordFrameWrites(b, ctx, c)
		})
	}
}

// BenchmarkWriteRecordFrameAccepted is BenchmarkWriteRecordFrame for a connection this
// package accepted (the rendezvous side: unmasked frames), written by the library and by the
// Conn itself (raw: header, head and tail in one writev), to a loopback coder/websocket
// client that reads and discards. (A raw variant copying the frame into a pooled buffer
// measured 18.0 us CPU per frame against writev's 15.7 and the library's 25.5, medians of
// five runs at load 11; issue 16.)
func BenchmarkWriteRecordFrameAccepted(b *testing.B) {
	for _, mode := range []string{"raw", "library"} {
		b.Run(mode, func(b *testing.B) {
			c, client := accept(b, false, nil, nil)
			ctx := context.Background()
			go func() {
				for {
					_, rd, err := client.Reader(ctx)
					if err != nil {
						return
					}
					if _, err := io.Copy(io.Discard, rd); err != nil {
						return
					}
				}
			}()
			wsconn.SetRawFramesForTest(c, mode != "library")
			measureRecordFrameWrites(b, ctx, c)
		})
	}
}

// measureRecordFrameWrites times WriteFrameSplit of one relay record frame (a 60-byte head
// and a 61,456-byte record) on c, and reports the writing thread's CPU per frame.
func measureRecordFrameWrites(b *testing.B, ctx context.Context, c *wsconn.Conn) {
	head, tail := make([]byte, 60), make([]byte, 61456)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	b.SetBytes(int64(len(head) + len(tail)))
	start := threadCPU()
	for b.Loop() {
		if err := c.WriteFrameSplit(ctx, head, tail); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(threadCPU()-start)/float64(b.N), "cpu-ns/op")
}
