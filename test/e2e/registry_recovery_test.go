package e2e_test

import (
	"context"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/execlab/executor/executor/protocol"
	"github.com/execlab/executor/harness"
	"github.com/execlab/executor/registry/registrytest"
)

// newRestartableRegistry serves our registry + rendezvous (in process) on a loopback port
// that the test can kill (listener and every socket) and restart on the same port, keeping
// the store and the URL signing key, as a restarted rendezvous process would.
func newRestartableRegistry(t *testing.T) *registrytest.Registry {
	t.Helper()
	return registrytest.Start(t, nil)
}

// startOnlineRemote serves a restartable registry (newRestartableRegistry) with our
// executor registered as env, and waits (bounded by ctx) until the executor is online.
func startOnlineRemote(ctx context.Context, t *testing.T, env string) *registrytest.Registry {
	t.Helper()
	reg := newRestartableRegistry(t)
	startOurRemote(t, reg.URL, env, reg.Token)
	reg.WaitOnline(ctx, t, env, true)
	return reg
}

// startOurRemote runs `executor remote` registered with reg (bearer on stdin).
func startOurRemote(t *testing.T, registryURL, env, bearer string) {
	t.Helper()
	startRemote(t, nil, registryURL, env, bearer)
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// waitFor polls cond every 20 ms until it holds or ctx ends.
func waitFor(t *testing.T, ctx context.Context, what string, cond func() bool) {
	t.Helper()
	for !cond() {
		select {
		case <-ctx.Done():
			t.Fatalf("waiting for %s: %v", what, ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// events collects one process's notifications from a harness Client.
type events struct {
	mu       sync.Mutex // guards the fields below: the collector goroutine writes, the test reads
	out      strings.Builder
	seqs     []uint64
	closed   bool
	exitCode int32
}

func (e *events) add(n harness.Notification) {
	e.mu.Lock()
	defer e.mu.Unlock()
	switch n.Method {
	case protocol.MethodProcessOutput:
		o, err := n.ProcessOutput()
		if err == nil {
			e.out.Write(o.Chunk)
			e.seqs = append(e.seqs, o.Seq)
		}
	case protocol.MethodProcessExited:
		x, err := n.ProcessExited()
		if err == nil {
			e.exitCode = x.ExitCode
			e.seqs = append(e.seqs, x.Seq)
		}
	case protocol.MethodProcessClosed:
		x, err := n.ProcessClosed()
		if err == nil {
			e.closed = true
			e.seqs = append(e.seqs, x.Seq)
		}
	}
}

func (e *events) has(s string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return strings.Contains(e.out.String(), s)
}

// TestRegistryRecovery_RendezvousRestartMidOutput kills the rendezvous listener (and every
// socket) while a process streams output, with a process/write issued during the outage,
// and restarts it on the same port. The harness SDK must recover: the concatenated output is
// byte-identical to the expected, seqs are each delivered once and contiguous, and no
// process/write is applied twice (a retried writeId is written once).
func TestRegistryRecovery_RendezvousRestartMidOutput(t *testing.T) {
	ignore := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, ignore) }) // registered first, so it runs last
	const env = "env-recovery"
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	reg := startOnlineRemote(ctx, t, env)

	var reconnects []string
	var recMu sync.Mutex
	c, err := harness.Dial(ctx, &harness.RemoteOptions{
		Registry: reg.URL, EnvironmentID: env, Token: reg.Token,
		OnReconnect: func(done bool, err error) {
			recMu.Lock()
			defer recMu.Unlock()
			reconnects = append(reconnects, map[bool]string{false: "lost", true: "done"}[done])
		},
	})
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	defer c.Close()
	if _, err := c.Initialize(ctx, "recovery-test", ""); err != nil {
		t.Fatal(err)
	}
	ev := &events{}
	collected := make(chan struct{})
	go func() {
		defer close(collected)
		for n := range c.Notifications() {
			ev.add(n)
		}
	}()
	script := `i=0; while [ $i -lt 100 ]; do echo "c $i"; i=$((i+1)); sleep 0.02; done; read x; echo "got $x"; read y; echo "got $y"`
	if _, err := c.StartProcess(ctx, protocol.ProcessStartParams{
		ProcessID: "p1", Argv: []string{"sh", "-c", script}, Cwd: protocol.FromNative("/"),
		Env: map[string]string{"PATH": "/usr/bin:/bin"}, PipeStdin: true,
	}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "output c 10", func() bool { return ev.has("c 10\n") })

	reg.Kill()
	writeDone := make(chan error, 1)
	go func() {
		st, err := c.WriteProcess(ctx, "p1", "w1", []byte("first\n"))
		if err == nil && st != protocol.WriteAccepted {
			err = errors.New("status " + string(st))
		}
		writeDone <- err
	}()
	time.Sleep(300 * time.Millisecond) // the outage
	reg.Restart()

	if err := <-writeDone; err != nil {
		t.Fatalf("process/write issued during the outage: %v", err)
	}
	waitFor(t, ctx, "got first", func() bool { return ev.has("got first\n") })
	// The same writeId again must not be applied a second time.
	if st, err := c.WriteProcess(ctx, "p1", "w1", []byte("first\n")); err != nil || st != protocol.WriteAccepted {
		t.Fatalf("retried process/write w1: got (%v, %v), want accepted", st, err)
	}
	if st, err := c.WriteProcess(ctx, "p1", "w2", []byte("second\n")); err != nil || st != protocol.WriteAccepted {
		t.Fatalf("process/write w2: got (%v, %v), want accepted", st, err)
	}
	waitFor(t, ctx, "process/closed", func() bool { ev.mu.Lock(); defer ev.mu.Unlock(); return ev.closed })
	c.Close()
	<-collected

	var want strings.Builder
	for i := range 100 {
		want.WriteString("c " + itoa(i) + "\n")
	}
	want.WriteString("got first\ngot second\n")
	ev.mu.Lock()
	defer ev.mu.Unlock()
	if got := ev.out.String(); got != want.String() {
		t.Errorf("output after recovery differs:\ngot  %q\nwant %q", tail(got), tail(want.String()))
	}
	seen := map[uint64]bool{}
	for _, s := range ev.seqs {
		if seen[s] {
			t.Errorf("seq %d delivered twice", s)
		}
		seen[s] = true
	}
	for s := uint64(1); s <= uint64(len(ev.seqs)); s++ {
		if !seen[s] {
			t.Errorf("seq %d missing of 1..%d", s, len(ev.seqs))
		}
	}
	if ev.exitCode != 0 {
		t.Errorf("exit code: got %d, want 0", ev.exitCode)
	}
	recMu.Lock()
	defer recMu.Unlock()
	if len(reconnects) < 2 || reconnects[0] != "lost" || reconnects[len(reconnects)-1] != "done" {
		t.Errorf("OnReconnect calls: got %v, want lost … done", reconnects)
	}
}

func itoa(i int) string {
	const digits = "0123456789"
	if i < 10 {
		return digits[i : i+1]
	}
	return itoa(i/10) + digits[i%10:i%10+1]
}

func tail(s string) string {
	if len(s) > 200 {
		return "…" + s[len(s)-200:]
	}
	return s
}
