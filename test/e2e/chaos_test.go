package e2e_test

import (
	"bufio"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/execlab/executor/internal/refbin"
	"github.com/execlab/executor/registry/rendezvous"
	"github.com/execlab/executor/registry/rendezvous/chaos"
	"github.com/execlab/executor/registry/server"
)

// chaosRig is a registry + rendezvous (in process) behind `executor chaos` (a real
// process), with `executor remote` registered through the proxy. Every URL the registry
// hands out points at the proxy.
type chaosRig struct {
	Proxy     string // http://127.0.0.1:P, the registry URL everyone uses
	Control   string // http://127.0.0.1:C
	Env       string
	TokenFile string
	hub       *rendezvous.Hub
	hubURL    string
	executor  *exec.Cmd // the executor process (ours or the reference)
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
	st, err := server.OpenStore(context.Background(), filepath.Join(t.TempDir(), "registry.db"))
	if err != nil {
		t.Fatal(err)
	}
	var tb [16]byte
	_, _ = rand.Read(tb[:])
	token := "tok_" + hex.EncodeToString(tb[:])
	tokens, err := server.ParseTokens(strings.NewReader(token))
	if err != nil {
		t.Fatal(err)
	}
	rig.TokenFile = filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(rig.TokenFile, []byte(token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	signer := rendezvous.NewRandomSigner()
	hub, err := rendezvous.New(&rendezvous.Options{Signer: signer, CurrentGeneration: server.GenerationFunc(st)})
	if err != nil {
		t.Fatal(err)
	}
	rig.hub = hub
	s, err := server.New(&server.Options{Store: st, Tokens: tokens, Hub: hub, Signer: signer, PublicURL: rig.Proxy})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	rig.hubURL = "http://" + ln.Addr().String()
	srv := &http.Server{Handler: s}
	served := make(chan struct{})
	go func() { defer close(served); _ = srv.Serve(ln) }()
	t.Cleanup(func() { srv.Close(); hub.Close(); <-served; st.Close() })

	args := []string{"chaos", "--listen", proxyAddr, "--upstream", rig.hubURL, "--control", "127.0.0.1:0", "--log-level", "info"}
	for _, f := range faults {
		args = append(args, "--fault", f)
	}
	rig.Control = startChaosProcess(t, args...)
	rig.executor = startRigExecutor(t, ro, rig.Proxy, rig.Env, token)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	waitFor(t, ctx, "the executor to connect through the proxy", func() bool { _, ok := hub.Online(rig.Env); return ok })
	return rig
}

// startRigExecutor starts the rig's executor registered through the proxy, and stops it
// (SIGTERM, then SIGKILL after 5 s) in Cleanup.
func startRigExecutor(t *testing.T, ro rigOptions, registryURL, env, bearer string) *exec.Cmd {
	t.Helper()
	var cmd *exec.Cmd
	if ro.reference != nil {
		cmd = exec.Command(ro.reference.Path, "exec-server", "--remote", registryURL, "--environment-id", env, "--registration-bearer-stdin")
		home := refbin.CodexHome(t)
		cmd.Env = []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + home, "CODEX_HOME=" + home, "RUST_LOG=warn"}
	} else {
		args := append([]string{"remote", "--registry", registryURL, "--environment-id", env, "--registration-bearer-stdin"}, ro.remoteArgs...)
		cmd = exec.Command(remoteExecutorBin(t), args...)
		cmd.Env = []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + t.TempDir()}
	}
	stdin, err := cmd.StdinPipe() // kept open: stdin EOF may mean "exit" to an executor
	if err != nil {
		t.Fatal(err)
	}
	var out lockedBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if _, err := io.WriteString(stdin, bearer+"\n"); err != nil {
		t.Fatal(err)
	}
	waited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(waited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-waited:
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill()
			<-waited
		}
		stdin.Close()
		if t.Failed() {
			t.Logf("executor output:\n%s", out.String())
		}
	})
	return cmd
}

// startChaosProcess runs `executor chaos`, waits for its two address lines and returns the
// control URL; Cleanup stops it with SIGTERM and expects exit status 0.
func startChaosProcess(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command(remoteExecutorBin(t), args...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr lockedBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	control := make(chan string, 1)
	waited := make(chan error, 1)
	go func() {
		re := regexp.MustCompile(`^chaos: control on (\S+)$`)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				control <- m[1]
			}
		}
		_, _ = io.Copy(io.Discard, stdout)
		waited <- cmd.Wait()
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case err := <-waited:
			if err != nil {
				t.Errorf("executor chaos exited with %v after SIGTERM, want 0 (stderr %s)", err, stderr.String())
			}
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			t.Errorf("executor chaos ignored SIGTERM for 10 s")
		}
		if t.Failed() {
			t.Logf("executor chaos stderr:\n%s", stderr.String())
		}
	})
	select {
	case c := <-control:
		return c
	case <-time.After(30 * time.Second):
		t.Fatalf("executor chaos printed no control line (stderr %s)", stderr.String())
		return ""
	}
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
