package e2e_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/execlab/executor/internal/refbin"
	"github.com/execlab/executor/registry/api"
	"github.com/execlab/executor/registry/registrytest"
	"github.com/execlab/executor/registry/server"
	"github.com/execlab/executor/relay/wsconn"
)

// reachableBound is the bound this test holds the scale-out to: after the node holding the
// executor's socket is killed, a connect through a surviving node hands out a live node's
// URL within it (docs/operations.md, node loss).
const reachableBound = 10 * time.Second

// freshPostgres returns the DSN of a new, empty PostgreSQL database (dropped at cleanup),
// or skips when EXECUTOR_TEST_POSTGRES_DSN is unset outside CI (fatal under CI=true).
func freshPostgres(t *testing.T) string {
	t.Helper()
	base := registrytest.PostgresDSN(t)
	if base == "" {
		t.Skip(registrytest.PostgresDSNEnv + " is unset")
	}
	return registrytest.FreshPostgres(t, base, "executor_e2e_")
}

// balancer is a TCP load balancer on loopback standing in for the Kubernetes Service in
// front of the registry nodes: each connection goes to the next backend, skipping the ones
// that refuse.
type balancer struct {
	ln net.Listener

	mu       sync.Mutex // guards backends, next and conns: the accept loop, proxies and the test race
	backends []string
	next     int
	conns    map[net.Conn]struct{} // nil once closed
	wg       sync.WaitGroup        // the accept loop and every proxy
}

func startBalancer(t *testing.T) *balancer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	b := &balancer{ln: ln, conns: map[net.Conn]struct{}{}}
	b.wg.Add(1)
	go b.acceptLoop()
	t.Cleanup(func() {
		ln.Close()
		b.mu.Lock()
		for c := range b.conns {
			c.Close()
		}
		b.conns = nil // nothing is tracked (or proxied) after this
		b.mu.Unlock()
		b.wg.Wait()
	})
	return b
}

func (b *balancer) URL() string { return "http://" + b.ln.Addr().String() }

func (b *balancer) setBackends(addrs ...string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.backends = addrs
}

func (b *balancer) track(c net.Conn) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.conns == nil {
		return false
	}
	b.conns[c] = struct{}{}
	return true
}

func (b *balancer) acceptLoop() {
	defer b.wg.Done()
	for {
		c, err := b.ln.Accept()
		if err != nil {
			return
		}
		if !b.track(c) {
			c.Close()
			continue
		}
		b.wg.Add(1)
		go func() { defer b.wg.Done(); b.proxy(c) }()
	}
}

// proxy dials backends from the next one on until one answers, then copies both ways.
func (b *balancer) proxy(c net.Conn) {
	defer c.Close()
	b.mu.Lock()
	backends, start := b.backends, b.next
	b.next++
	b.mu.Unlock()
	for i := range backends {
		up, err := net.DialTimeout("tcp", backends[(start+i)%len(backends)], time.Second)
		if err != nil {
			continue
		}
		if !b.track(up) {
			up.Close()
			return
		}
		done := make(chan struct{})
		go func() { _, _ = io.Copy(up, c); up.(*net.TCPConn).CloseWrite(); close(done) }()
		_, _ = io.Copy(c, up)
		c.Close()
		<-done
		up.Close()
		return
	}
}

// regNode is one `executor registry serve` process.
type regNode struct {
	id, addr string
	proc     *refbin.Proc
}

func (n *regNode) URL() string { return "http://" + n.addr }

// startRegistryNode runs `executor registry serve` on addr and waits for its URL line.
func startRegistryNode(t *testing.T, id, addr, db, tokenFile, publicURL string) *regNode {
	t.Helper()
	args := []string{"registry", "serve", "--listen", addr, "--db", db, "--token-file", tokenFile, "--log-level", "info"}
	if id != "" {
		args = append(args, "--node-id", id, "--advertise-url", "http://"+addr, "--public-url", publicURL)
	}
	cmd := refbin.Command(t, nil, remoteExecutorBin(t), args...)
	return &regNode{id: id, addr: addr, proc: refbin.Launch(t, cmd, &refbin.LaunchOptions{Name: "registry node " + id})}
}

// kill9 SIGKILLs the node and waits for it.
func (n *regNode) kill9() {
	_ = n.proc.Cmd.Process.Signal(syscall.SIGKILL)
	<-n.proc.Done()
}

// writeTokenFile writes a token scoped to both roles in env and returns its path.
func writeTokenFile(t *testing.T, token, env string) string {
	p := filepath.Join(t.TempDir(), "tokens")
	if err := os.WriteFile(p, []byte(token+" roles=executor,harness envs="+env+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// connectAt posts connect to a registry node and returns the status and bundle.
func connectAt(base, env, token string) (int, api.ConnectResponse, error) {
	req, _ := http.NewRequest(http.MethodPost, base+api.Path(env, api.ConnectSuffix),
		strings.NewReader(`{"harness_public_key":`+testKeyJSON()+`}`))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	c := &http.Client{Timeout: 5 * time.Second}
	resp, err := c.Do(req)
	if err != nil {
		return 0, api.ConnectResponse{}, err
	}
	defer resp.Body.Close()
	var b api.ConnectResponse
	if resp.StatusCode == 200 {
		err = json.NewDecoder(resp.Body).Decode(&b)
	}
	return resp.StatusCode, b, err
}

// seqStream is the deterministic stream the long exec prints: the lines "1\n".."N\n" of
// seq, in 64 chunks with a pause after each (so a kill lands mid-stream), cut at exactly
// streamBytes.
const (
	streamBytes  = 16 << 20
	streamChunks = 64
	streamPerChk = 40000 // numbers per chunk: 64 × 40,000 numbers of ~7 bytes > 16 MiB
)

func streamScript() string {
	return fmt.Sprintf(`k=0; while [ $k -lt %d ]; do seq $((k*%d+1)) $(((k+1)*%d)); sleep 0.05; k=$((k+1)); done | head -c %d`,
		streamChunks, streamPerChk, streamPerChk, streamBytes)
}

func streamSum() [32]byte {
	var b bytes.Buffer
	for i := 1; b.Len() < streamBytes; i++ {
		b.WriteString(strconv.Itoa(i))
		b.WriteByte('\n')
	}
	return sha256.Sum256(b.Bytes()[:streamBytes])
}

// countingWriter hashes and counts what it is given.
type countingWriter struct {
	mu sync.Mutex // guards the fields: exec's stdout copier writes, the test reads
	h  interface {
		io.Writer
		Sum([]byte) []byte
	}
	n int
}

func (w *countingWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.h.Write(p)
	w.n += len(p)
	return len(p), nil
}

func (w *countingWriter) count() int { w.mu.Lock(); defer w.mu.Unlock(); return w.n }

// TestRegistryScaleOut_NodeLoss runs 3 `registry serve` nodes on one PostgreSQL database
// behind a TCP balancer (the Service), one `executor remote` (through the balancer) and 20
// `executor exec`s spread over the nodes and the balancer. Mid-way through a 16 MiB stream
// it SIGKILLs the node holding the executor's socket, and checks: a connect through a
// survivor hands out a survivor within reachableBound; the running exec finishes with the
// right checksum and exit code; new execs succeed; the executor did not re-register (its
// URL, signed before the kill, was accepted by a survivor); and harness URLs the killed
// node signed before the kill upgrade at a survivor.
func TestRegistryScaleOut_NodeLoss(t *testing.T) {
	dsn := freshPostgres(t)
	const env = "env-scaleout"
	token := "tok_" + randHex(16)
	tokens := writeTokenFile(t, token, env)
	lb := startBalancer(t)
	var nodes []*regNode
	for i := range 3 {
		nodes = append(nodes, startRegistryNode(t, "node-"+strconv.Itoa(i), freeAddr(t), dsn, tokens, lb.URL()))
	}
	lb.setBackends(nodes[0].addr, nodes[1].addr, nodes[2].addr)
	st, err := server.OpenStore(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	startOurRemote(t, lb.URL(), env, token)

	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	var holder *regNode
	waitFor(t, ctx, "the executor's location", func() bool {
		loc, err := st.Location(ctx, env, time.Now())
		if err != nil {
			return false
		}
		for _, n := range nodes {
			if n.id == loc.NodeID {
				holder = n
			}
		}
		return holder != nil
	})
	reg0, err := st.Registration(ctx, env)
	if err != nil {
		t.Fatal(err)
	}
	target := func(base string) []string {
		return []string{"--registry", base, "--environment-id", env, "--token-file", tokens}
	}
	bases := []string{nodes[0].URL(), nodes[1].URL(), nodes[2].URL(), lb.URL()}
	runSmall := func(i int, base string) {
		t.Helper()
		out, code := runExecCLI(t, append(target(base), "--", "sh", "-c", fmt.Sprintf("echo $((%d * %d)); exit %d", i, i, i%7))...)
		if want := strconv.Itoa(i*i) + "\n"; out != want || code != i%7 {
			t.Errorf("exec %d via %s: got %q exit %d, want %q exit %d", i, base, out, code, want, i%7)
		}
	}
	for i := range 10 {
		runSmall(i, bases[i%len(bases)])
	}
	// Harness URLs the doomed node signs before the kill (it holds the socket, so they name it).
	var preKill []string
	for range 3 {
		code, b, err := connectAt(holder.URL(), env, token)
		if err != nil || code != 200 {
			t.Fatalf("connect at the holding node: %d %v", code, err)
		}
		preKill = append(preKill, b.URL)
	}

	sum := &countingWriter{h: sha256.New()}
	var stderr lockedBuffer
	long := exec.CommandContext(ctx, remoteExecutorBin(t), append(append([]string{"exec"}, target(lb.URL())...), "--", "sh", "-c", streamScript()+"; exit 3")...)
	long.Stdout, long.Stderr = sum, &stderr
	if err := long.Start(); err != nil {
		t.Fatal(err)
	}
	longDone := make(chan error, 1)
	go func() { longDone <- long.Wait() }()
	for sum.count() < 4<<20 {
		select {
		case err := <-longDone:
			t.Fatalf("the long exec ended before 4 MiB: %v, %d bytes (stderr %s)", err, sum.count(), stderr.String())
		case <-ctx.Done():
			t.Fatalf("waiting for 4 MiB of the stream: %d bytes (stderr %s)", sum.count(), stderr.String())
		case <-time.After(20 * time.Millisecond):
		}
	}

	holder.kill9()
	killed := time.Now()
	var survivors []*regNode
	for _, n := range nodes {
		if n != holder {
			survivors = append(survivors, n)
		}
	}
	lb.setBackends(survivors[0].addr, survivors[1].addr)
	// Reachable: a connect through a survivor hands out a survivor.
	var reachable time.Duration
	for reachable == 0 {
		code, b, err := connectAt(survivors[0].URL(), env, token)
		if err == nil && code == 200 && hostOf(b.URL) != holder.addr {
			reachable = time.Since(killed)
			break
		}
		if time.Since(killed) > reachableBound {
			t.Fatalf("the executor was not reachable through a survivor %v after the kill (last: %d %v)", reachableBound, code, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("executor reachable through a survivor %v after the kill", reachable.Round(time.Millisecond))
	loc, err := st.Location(ctx, env, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	moved := &regNode{}
	for _, n := range survivors {
		if n.id == loc.NodeID {
			moved = n
		}
	}
	if moved.id == "" {
		t.Fatalf("location after the kill: node %q, want a survivor", loc.NodeID)
	}
	if reg, err := st.Registration(ctx, env); err != nil || reg.Generation != reg0.Generation {
		t.Errorf("registration after the kill: generation %d (%v), want %d: the executor re-registered instead of redialling its URL", reg.Generation, err, reg0.Generation)
	}
	// URLs signed by the killed node before the kill still verify at the survivor holding
	// the executor: they upgrade (a rejected signature would be 401).
	for i, raw := range preKill {
		u, _ := url.Parse(raw)
		u.Host = moved.addr
		c, err := wsconn.Dial(ctx, u.String(), nil)
		if err != nil {
			t.Errorf("harness url %d signed by the killed node, dialled at survivor %s: %v", i, moved.id, err)
			continue
		}
		c.Close()
	}

	for i := 10; i < 20; i++ {
		runSmall(i, []string{survivors[0].URL(), survivors[1].URL(), lb.URL()}[i%3])
	}

	select {
	case err = <-longDone:
	case <-ctx.Done():
		t.Fatalf("the running exec did not finish (%d of %d bytes; stderr %s)", sum.count(), streamBytes, stderr.String())
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 3 {
		t.Errorf("running exec across the kill: got %v, want exit 3 (stderr %s)", err, stderr.String())
	}
	want := streamSum()
	if got := sum.h.Sum(nil); sum.count() != streamBytes || !bytes.Equal(got, want[:]) {
		t.Errorf("running exec across the kill: got %d bytes sha256 %x, want %d bytes %x (stderr %s)",
			sum.count(), got, streamBytes, want, stderr.String())
	}
}

// TestRegistryRestart_SQLiteKeepsExecutors kills a single `registry serve` on SQLite
// (SIGKILL) and starts it again on the same port and file: the attached executor redials
// its URL, which the restarted process accepts (the signing key is in the file), so it
// resumes without re-registering, and exec works again.
func TestRegistryRestart_SQLiteKeepsExecutors(t *testing.T) {
	const env = "env-sqlite-restart"
	token := "tok_" + randHex(16)
	tokens := writeTokenFile(t, token, env)
	db := filepath.Join(t.TempDir(), "registry.db")
	addr := freeAddr(t)
	n := startRegistryNode(t, "", addr, db, tokens, "")
	startOurRemote(t, n.URL(), env, token)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	online := func() bool { code, _, err := connectAt(n.URL(), env, token); return err == nil && code == 200 }
	waitFor(t, ctx, "the executor online", online)
	args := []string{"--registry", n.URL(), "--environment-id", env, "--token-file", tokens, "--", "sh", "-c", "echo up; exit 4"}
	if out, code := runExecCLI(t, args...); out != "up\n" || code != 4 {
		t.Fatalf("exec before the restart: got %q exit %d", out, code)
	}
	n.kill9()
	n = startRegistryNode(t, "", addr, db, tokens, "")
	waitFor(t, ctx, "the executor back after the restart", online)
	if out, code := runExecCLI(t, args...); out != "up\n" || code != 4 {
		t.Errorf("exec after the restart: got %q exit %d, want up exit 4", out, code)
	}
	st, err := server.OpenStore(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if reg, err := st.Registration(ctx, env); err != nil || reg.Generation != 1 {
		t.Errorf("registration after the restart: generation %d (%v), want 1 (no re-registration)", reg.Generation, err)
	}
}

func hostOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return u.Host
}

func randHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
