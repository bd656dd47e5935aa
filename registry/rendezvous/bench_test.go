package rendezvous_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/execlab/executor/registry/rendezvous"
	"github.com/execlab/executor/relay/frame"
	"github.com/execlab/executor/relay/wsconn"
)

// benchClientEnv makes the test binary act as the socket-holding client process of
// BenchmarkHub_IdleSocketMemory (TestBenchClientHelper).
const benchClientEnv = "RENDEZVOUS_BENCH_CLIENT_URLS"

// TestBenchClientHelper is not a test: run by BenchmarkHub_IdleSocketMemory in a child
// process, it dials every URL listed in the file named by RENDEZVOUS_BENCH_CLIENT_URLS
// (harness lines carry a stream id to claim), prints "ready", and holds the sockets until
// stdin closes. Without the variable it returns at once.
func TestBenchClientHelper(t *testing.T) {
	path := os.Getenv(benchClientEnv)
	if path == "" {
		return
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var conns []*wsconn.Conn
	ctx := context.Background()
	opts := &wsconn.DialOptions{Conn: &wsconn.Options{PingInterval: time.Hour}}
	for _, line := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		u, stream, _ := strings.Cut(line, " ")
		c, err := wsconn.Dial(ctx, u, opts)
		if err != nil {
			t.Fatalf("dial %d: %v", len(conns), err)
		}
		if stream != "" {
			b, _ := frame.Encode(nil, &frame.Frame{Version: frame.Version, StreamID: stream, Body: &frame.Resume{}})
			if err := c.WriteFrame(ctx, b); err != nil {
				t.Fatal(err)
			}
		}
		conns = append(conns, c)
	}
	fmt.Println("ready")
	_, _ = bufio.NewReader(os.Stdin).ReadString('\n')
	for _, c := range conns {
		c.Close()
	}
}

// BenchmarkHub_IdleSocketMemory opens 10,000 idle sockets (5,000 environments, each one
// executor + one harness with a claimed stream) from a child process and reports the hub
// process's heap+stack and RSS growth per socket. Budget (issue 5): ≤ 25 KB per socket.
func BenchmarkHub_IdleSocketMemory(b *testing.B) {
	const envs = 5000
	sockets := 2 * envs
	b.StopTimer()
	for range b.N {
		measureIdle(b, envs, sockets)
	}
}

func measureIdle(b *testing.B, envs, sockets int) {
	signer := rendezvous.NewRandomSigner()
	hub, err := rendezvous.New(&rendezvous.Options{Signer: signer, Conn: &wsconn.Options{PingInterval: time.Hour}})
	if err != nil {
		b.Fatal(err)
	}
	srv := newLoopbackServer(b, hub)
	defer func() { srv.close(); hub.Close() }()
	var lines strings.Builder
	exp := time.Now().Add(time.Hour)
	for i := range envs {
		env := "env-" + strconv.Itoa(i)
		lines.WriteString(signer.URL(srv.base, rendezvous.Claims{Role: rendezvous.RoleEnvironment, EnvironmentID: env, Generation: 1, Expires: exp}) + "\n")
	}
	for i := range envs {
		env := "env-" + strconv.Itoa(i)
		lines.WriteString(signer.URL(srv.base, rendezvous.Claims{Role: rendezvous.RoleHarness, EnvironmentID: env, Generation: 1, Expires: exp}) + " stream-" + strconv.Itoa(i) + "\n")
	}
	file := filepath.Join(b.TempDir(), "urls")
	if err := os.WriteFile(file, []byte(lines.String()), 0o600); err != nil {
		b.Fatal(err)
	}
	heap0, rss0 := memNow()
	child := exec.Command(os.Args[0], "-test.run=^TestBenchClientHelper$", "-test.count=1")
	child.Env = append(os.Environ(), benchClientEnv+"="+file)
	stdin, _ := child.StdinPipe()
	stdout, _ := child.StdoutPipe()
	child.Stderr = os.Stderr
	if err := child.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() { stdin.Close(); _ = child.Wait() }()
	sc := bufio.NewScanner(stdout)
	for sc.Scan() && sc.Text() != "ready" {
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		st := hub.Stats()
		if st.ExecutorSockets == int64(envs) && st.HarnessSockets == int64(envs) {
			break
		}
		if time.Now().After(deadline) {
			b.Fatalf("sockets attached: %+v, want %d + %d", st, envs, envs)
		}
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(500 * time.Millisecond) // let harness claims land
	heap1, rss1 := memNow()
	per := float64(heap1-heap0) / float64(sockets)
	perRSS := float64(rss1-rss0) / float64(sockets)
	b.ReportMetric(per, "heap+stack-B/socket")
	b.ReportMetric(perRSS, "RSS-B/socket")
	b.Logf("%d idle sockets: heap+stack %.0f B/socket, RSS %.0f B/socket (budget 25000)", sockets, per, perRSS)
}

// memNow returns heap-in-use + stack-in-use and RSS after a full GC.
func memNow() (heap, rss uint64) {
	runtime.GC()
	debug.FreeOSMemory()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	raw, _ := os.ReadFile("/proc/self/statm")
	fields := strings.Fields(string(raw))
	if len(fields) > 1 {
		pages, _ := strconv.ParseUint(fields[1], 10, 64)
		rss = pages * uint64(os.Getpagesize())
	}
	return ms.HeapInuse + ms.StackInuse, rss
}

// BenchmarkHub_ForwardOneStream measures one stream's forwarding rate through the hub on
// loopback: full-record data frames (61508 B) from a harness socket to the executor socket.
// Budget (issue 5): ≥ 400 MiB/s.
func BenchmarkHub_ForwardOneStream(b *testing.B) {
	signer := rendezvous.NewRandomSigner()
	hub, err := rendezvous.New(&rendezvous.Options{Signer: signer})
	if err != nil {
		b.Fatal(err)
	}
	srv := newLoopbackServer(b, hub)
	defer func() { srv.close(); hub.Close() }()
	exp := time.Now().Add(time.Hour)
	ctx := context.Background()
	ex, err := wsconn.Dial(ctx, signer.URL(srv.base, rendezvous.Claims{Role: rendezvous.RoleEnvironment, EnvironmentID: "env", Generation: 1, Expires: exp}), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer ex.Close()
	for {
		if _, ok := hub.Online("env"); ok {
			break
		}
		time.Sleep(time.Millisecond)
	}
	h, err := wsconn.Dial(ctx, signer.URL(srv.base, rendezvous.Claims{Role: rendezvous.RoleHarness, EnvironmentID: "env", Generation: 1, Expires: exp}), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer h.Close()
	msg, _ := frame.Encode(nil, &frame.Frame{Version: frame.Version, StreamID: "0123456789abcdef0123456789abcdef0123",
		Body: &frame.Data{SegmentCount: 1, Payload: make([]byte, 61440+16)}})
	b.SetBytes(int64(len(msg)))
	done := make(chan error, 1)
	go func() {
		for range b.N {
			if _, err := ex.ReadFrame(ctx); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	b.ResetTimer()
	for range b.N {
		if err := h.WriteFrame(ctx, msg); err != nil {
			b.Fatal(err)
		}
	}
	if err := <-done; err != nil {
		b.Fatal(err)
	}
}
