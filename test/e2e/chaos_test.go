package e2e_test

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"io"
	"net/http"
	"os/exec"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/execlab/executor/internal/refbin"
	"github.com/execlab/executor/registry/registrytest"
	"github.com/execlab/executor/registry/rendezvous/chaos"
)

// chaosRig is a registry + rendezvous (in process) behind `executor chaos` (a real
// process), with `executor remote` registered through the proxy. Every URL the registry
// hands out points at the proxy.
type chaosRig struct {
	Proxy     string // http://127.0.0.1:P, the registry URL everyone uses
	Control   string // http://127.0.0.1:C
	Env       string
	TokenFile string
	reg       *registrytest.Registry
	executor  *refbin.Proc // the executor process (ours or the reference)
}

// rigOptions chooses the rig's executor.
type rigOptions struct {
	reference  *refbin.Release // nil: ours
	remoteArgs []string        // extra flags for ours
}

func startChaosRig(t *testing.T, faults ...string) *chaosRig {
	t.Helper()
	return startChaosRigWith(t, rigOptions{}, faults...)
}

func startChaosRigWith(t *testing.T, ro rigOptions, faults ...string) *chaosRig {
	t.Helper()
	proxyAddr := freeAddr(t)
	rig := &chaosRig{Proxy: "http://" + proxyAddr, Env: "env-chaos"}
	rig.reg = registrytest.Start(t, &registrytest.Options{PublicURL: func(string) string { return rig.Proxy }})
	rig.TokenFile = rig.reg.TokenFile

	args := []string{"chaos", "--listen", proxyAddr, "--upstream", "http://" + rig.reg.Addr, "--control", "127.0.0.1:0", "--log-level", "info"}
	for _, f := range faults {
		args = append(args, "--fault", f)
	}
	rig.Control = startChaosProcess(t, args...)
	rig.executor = startRemote(t, ro.reference, rig.Proxy, rig.Env, rig.reg.Token, ro.remoteArgs...)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rig.reg.WaitOnline(ctx, t, rig.Env, true) // the executor connected through the proxy
	return rig
}

// startChaosProcess runs `executor chaos`, waits for its two address lines and returns the
// control URL; Cleanup stops it with SIGTERM and expects exit status 0 within 10 s.
func startChaosProcess(t *testing.T, args ...string) string {
	t.Helper()
	p := refbin.Launch(t, exec.Command(remoteExecutorBin(t), args...), &refbin.LaunchOptions{
		Line: regexp.MustCompile(`^chaos: control on (\S+)$`), StopTimeout: 10 * time.Second, Exit: refbin.ExitClean, Name: "executor chaos"})
	return p.Match[1]
}

// stats reads the proxy's counters.
func (r *chaosRig) stats(t *testing.T) chaos.Stats {
	t.Helper()
	resp, err := http.Get(r.Control + "/stats")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var s chaos.Stats
	if err := json.NewDecoder(resp.Body).Decode(&s); err != nil {
		t.Fatal(err)
	}
	return s
}

// inject fires a fault through the control endpoint.
func (r *chaosRig) inject(t *testing.T, spec string) {
	t.Helper()
	resp, err := http.Post(r.Control+"/faults", "text/plain", strings.NewReader(spec))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("injecting %q: HTTP %d %s", spec, resp.StatusCode, body)
	}
}

// execResult is one finished `executor exec`.
type chaosExec struct {
	sum    [32]byte
	n      int64
	code   int
	stderr string
	took   time.Duration
	hung   bool // killed at its time limit
}

// exec runs `executor exec` through the proxy and hashes its stdout as it streams.
func (r *chaosRig) exec(t *testing.T, limit time.Duration, argv ...string) chaosExec {
	t.Helper()
	return r.execWith(t, limit, nil, argv...)
}

// execWith is exec with extra `executor exec` flags. An exec still running at limit is
// killed and reported with hung set.
func (r *chaosRig) execWith(t *testing.T, limit time.Duration, flags []string, argv ...string) chaosExec {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	args := append([]string{"exec", "--registry", r.Proxy, "--environment-id", r.Env, "--token-file", r.TokenFile}, flags...)
	args = append(append(args, "--"), argv...)
	cmd := exec.CommandContext(ctx, remoteExecutorBin(t), args...)
	res := runHashed(t, cmd)
	res.hung = ctx.Err() != nil
	return res
}

// execStreaming is exec that hands its live stderr buffer to stderrCh once started.
func (r *chaosRig) execStreaming(t *testing.T, limit time.Duration, stderrCh chan<- *lockedBuffer, seen *atomic.Int64, argv ...string) chaosExec {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	args := append([]string{"exec", "--registry", r.Proxy, "--environment-id", r.Env, "--token-file", r.TokenFile, "--"}, argv...)
	cmd := exec.CommandContext(ctx, remoteExecutorBin(t), args...)
	stderr := &lockedBuffer{}
	stderrCh <- stderr
	res := runHashedCounting(t, cmd, stderr, seen)
	res.hung = ctx.Err() != nil
	return res
}

func runHashed(t *testing.T, cmd *exec.Cmd) chaosExec {
	t.Helper()
	return runHashedInto(t, cmd, &lockedBuffer{})
}

func runHashedInto(t *testing.T, cmd *exec.Cmd, stderr *lockedBuffer) chaosExec {
	t.Helper()
	return runHashedCounting(t, cmd, stderr, nil)
}

// execCounting is exec that adds every stdout byte to *seen as it streams, for a fault
// that must land mid-stream rather than while exec is still connecting.
func (r *chaosRig) execCounting(t *testing.T, limit time.Duration, seen *atomic.Int64, argv ...string) chaosExec {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	args := append([]string{"exec", "--registry", r.Proxy, "--environment-id", r.Env, "--token-file", r.TokenFile, "--"}, argv...)
	res := runHashedCounting(t, exec.CommandContext(ctx, remoteExecutorBin(t), args...), &lockedBuffer{}, seen)
	res.hung = ctx.Err() != nil
	return res
}

// byteCounter adds the length of every write to n.
type byteCounter struct{ n *atomic.Int64 }

func (w byteCounter) Write(p []byte) (int, error) {
	w.n.Add(int64(len(p)))
	return len(p), nil
}

// runHashedCounting runs cmd, hashing its stdout; a non-nil seen counts the bytes as
// they arrive.
func runHashedCounting(t *testing.T, cmd *exec.Cmd, stderr *lockedBuffer, seen *atomic.Int64) chaosExec {
	t.Helper()
	cmd.Stderr = stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	h := sha256.New()
	var sink io.Writer = h
	if seen != nil {
		sink = io.MultiWriter(h, byteCounter{seen})
	}
	n, _ := io.Copy(sink, out)
	err = cmd.Wait()
	res := chaosExec{n: n, stderr: stderr.String(), took: time.Since(start)}
	copy(res.sum[:], h.Sum(nil))
	if ee, ok := err.(*exec.ExitError); ok {
		res.code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("%v: %v (stderr %s)", cmd.Args, err, res.stderr)
	}
	return res
}

// localRun runs argv here, for the reference hash.
func localRun(t *testing.T, argv ...string) chaosExec {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	return runHashed(t, exec.CommandContext(ctx, argv[0], argv[1:]...))
}

func checkSame(t *testing.T, what string, got, want chaosExec) {
	t.Helper()
	if got.hung {
		t.Errorf("%s: exec still running after %v (hang); %d bytes so far (stderr %s)", what, got.took.Round(time.Second), got.n, got.stderr)
		return
	}
	if got.sum != want.sum || got.n != want.n || got.code != want.code {
		t.Errorf("%s: %d bytes sha256 %x rc %d; local run: %d bytes sha256 %x rc %d (stderr %s)",
			what, got.n, got.sum[:6], got.code, want.n, want.sum[:6], want.code, got.stderr)
	}
}

// TestChaos_ScheduledDelayAndStall drives a real `executor exec` of about 8 MB through
// `executor chaos` with a 5 ms delay on every frame of both sides and a 3 s harness-side
// stall (no RST) fired by bytes relayed: the output is byte-identical to a local run, the
// exit status too, and the proxy reports both faults fired, frames delayed, and the exec
// taking at least the stall.
func TestChaos_ScheduledDelayAndStall(t *testing.T) {
	rig := startChaosRig(t, "side=both delay=5ms", "at=2MiB side=harness stall=3s")
	argv := []string{"sh", "-c", "seq 1 1200000; exit 7"}
	want := localRun(t, argv...)
	got := rig.exec(t, 2*time.Minute, argv...)
	checkSame(t, "exec through chaos (delay + stall)", got, want)
	s := rig.stats(t)
	if s.Fired != 2 || s.Stalls != 1 || s.Delayed == 0 || s.Links < 2 {
		t.Errorf("proxy stats %+v: want 2 faults fired (1 stall), frames delayed, ≥ 2 links", s)
	}
	if got.took < 3*time.Second {
		t.Errorf("exec took %v, less than the 3 s stall", got.took)
	}
	t.Logf("exec %d bytes in %v; proxy %+v", got.n, got.took, s)
}

// TestChaos_OnDemandHarnessCut: a cut of the harness side injected through the control
// endpoint while a slow stream runs drops exec's socket; exec reconnects (through the
// proxy, once the cut ends) and the output is complete and in order.
func TestChaos_OnDemandHarnessCut(t *testing.T) {
	rig := startChaosRig(t)
	argv := []string{"sh", "-c", "i=0; while [ $i -lt 60 ]; do echo line $i; i=$((i+1)); sleep 0.05; done"}
	want := localRun(t, argv...)
	done := make(chan chaosExec, 1)
	go func() { done <- rig.exec(t, time.Minute, argv...) }()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	waitFor(t, ctx, "the exec's harness link", func() bool { return rig.stats(t).OpenLinks >= 2 })
	time.Sleep(500 * time.Millisecond)
	rig.inject(t, "side=harness cut=1s")
	got := <-done
	checkSame(t, "exec across an on-demand harness cut", got, want)
	s := rig.stats(t)
	if s.Cuts != 1 || s.Links < 3 {
		t.Errorf("proxy stats %+v: want 1 cut and a new harness link after it", s)
	}
	if !strings.Contains(got.stderr, "reconnect") {
		t.Errorf("exec stderr %q: want a reconnect notice", got.stderr)
	}
}
