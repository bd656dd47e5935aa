package remote_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/execlab/executor/cmd/executor/internal/remote"
	"github.com/execlab/executor/executor"
	"github.com/execlab/executor/executor/protocol"
	"github.com/execlab/executor/harness"
	"github.com/execlab/executor/noise"
	"github.com/execlab/executor/registry/client"
	"github.com/execlab/executor/relay/mux"
)

const benchChildEnv = "REMOTE_BENCH_CHILD_REGISTRY"

// runBenchChild is the executor half of BenchmarkRemote_IdleStreamHeap, in its own process so
// its heap is measured alone. It registers with the registry named by the environment, serves
// streams, and answers each "heap" line on stdin with the live heap after a GC.
func runBenchChild() int {
	bearer, _ := client.NewBearer(testBearer)
	c, err := client.New(&client.Options{BaseURL: os.Getenv(benchChildEnv), EnvironmentID: testEnvID, Auth: bearer})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	maxStreams, _ := strconv.Atoi(os.Getenv("REMOTE_BENCH_CHILD_MAX_STREAMS"))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	srv := executor.NewServer(&executor.Options{Logger: slog.New(slog.DiscardHandler)})
	defer srv.Close() // created here, closed here (after Run has returned)
	go func() {
		done <- remote.Run(ctx, remote.Config{Registry: c, Server: srv, Mux: &mux.Options{MaxStreams: maxStreams}})
	}()
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
		runtime.GC()
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		fmt.Printf("%d %d\n", ms.HeapAlloc, runtime.NumGoroutine())
	}
	cancel()
	<-done
	return 0
}

// BenchmarkRemote_IdleStreamHeap opens 1,000 authenticated harness streams (initialize done,
// then idle) on one executor process with the stream cap raised, and reports the executor's
// live heap per idle stream (issue budget: ≤ 32 KiB).
func BenchmarkRemote_IdleStreamHeap(b *testing.B) {
	const streams = 1000
	for range b.N {
		b.StopTimer()
		fxT := newFixture(b)
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), benchChildEnv+"="+fxT.registry.URL, "REMOTE_BENCH_CHILD_MAX_STREAMS=2000")
		stdin, _ := cmd.StdinPipe()
		stdout, _ := cmd.StdoutPipe()
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		out := bufio.NewScanner(stdout)
		heap := func() (uint64, int) {
			io.WriteString(stdin, "heap\n")
			if !out.Scan() {
				b.Fatalf("child heap report: %v", out.Err())
			}
			f := strings.Fields(out.Text())
			h, _ := strconv.ParseUint(f[0], 10, 64)
			g, _ := strconv.Atoi(f[1])
			return h, g
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		sock := fxT.nextSocket(ctx)
		harnessID, _ := noise.GenerateIdentity(nil)
		// Warm up one stream so lazily built state is in the baseline.
		warm, err := fxT.handshake(ctx, b, sock, "warm", harnessID)
		if err != nil {
			b.Fatal(err)
		}
		wc := harness.Open(warm, nil)
		if _, err := wc.Initialize(ctx, "warm", ""); err != nil {
			b.Fatal(err)
		}
		base, baseG := heap()
		b.StartTimer()
		clients := make([]*harness.Client, 0, streams)
		for i := range streams {
			conn, err := fxT.handshake(ctx, b, sock, fmt.Sprintf("s-%d", i), harnessID)
			if err != nil {
				b.Fatalf("stream %d: %v", i, err)
			}
			cl := harness.Open(conn, nil)
			if _, err := cl.Initialize(ctx, fmt.Sprintf("bench-%d", i), ""); err != nil {
				b.Fatalf("initialize %d: %v", i, err)
			}
			clients = append(clients, cl)
		}
		b.StopTimer()
		after, afterG := heap()
		per := float64(int64(after)-int64(base)) / streams
		b.ReportMetric(per, "heapB/idle-stream")
		b.ReportMetric(float64(afterG-baseG)/streams, "goroutines/stream")
		for _, cl := range clients {
			cl.Close()
		}
		wc.Close()
		stdin.Close()
		cmd.Wait()
		cancel()
	}
}

// BenchmarkRemote_StreamThroughput pushes process stdout (head -c of /dev/zero) through one
// stream: executor → Noise → mux → websocket → in-test rendezvous on loopback → Go harness.
func BenchmarkRemote_StreamThroughput(b *testing.B) {
	const size = 64 << 20
	fx := newFixture(b)
	runExecutor(b, fx, nil, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	sock := fx.nextSocket(ctx)
	harnessID, _ := noise.GenerateIdentity(nil)
	conn, err := fx.handshake(ctx, b, sock, "tp", harnessID)
	if err != nil {
		b.Fatal(err)
	}
	got := make(chan int, 1024)
	cl := harness.Open(conn, &harness.Options{OnNotification: func(n harness.Notification) {
		switch n.Method {
		case protocol.MethodProcessOutput:
			if o, err := n.ProcessOutput(); err == nil {
				got <- len(o.Chunk)
			}
		case protocol.MethodProcessClosed:
			got <- -1
		}
	}})
	defer cl.Close()
	if _, err := cl.Initialize(ctx, "tp", ""); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(size)
	b.ResetTimer()
	for i := range b.N {
		pid := fmt.Sprintf("p%d", i)
		if _, err := cl.StartProcess(ctx, protocol.ProcessStartParams{ProcessID: pid,
			Argv: []string{"head", "-c", strconv.Itoa(size), "/dev/zero"}, Cwd: protocol.FromNative(os.TempDir()),
			Env: map[string]string{"PATH": "/usr/bin:/bin"}}); err != nil {
			b.Fatal(err)
		}
		total := 0
		for n := range got {
			if n < 0 {
				break
			}
			total += n
		}
		if total != size {
			b.Fatalf("received %d bytes, want %d", total, size)
		}
	}
}
