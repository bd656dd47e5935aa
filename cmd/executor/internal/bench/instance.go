package bench

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Target is one side of the comparison: how to start an executor that prints its
// ws:// URL on stdout.
type Target struct {
	// Name is "ours" or "reference".
	Name string
	// Argv starts the executor listening on ws://127.0.0.1:0.
	Argv []string
	// RemoteArgv returns the argv that registers the executor with the registry at
	// registryURL as environmentID, reading a registration bearer (one line) from stdin.
	// Nil: the side has no remote mode and the relay rows fail for it.
	RemoteArgv func(registryURL, environmentID string) []string
	// Env is added to the executor's environment, after (so overriding) the bench's own
	// ("NAME=value" entries; the telemetry overhead mode sets metrics and OTEL_* here).
	Env []string
}

// OursTarget is our executor binary: `serve --listen ws://127.0.0.1:0` locally, `remote
// --registry …` behind a registry.
func OursTarget(bin string) Target {
	return Target{
		Name: "ours",
		Argv: []string{bin, "serve", "--listen", "ws://127.0.0.1:0"},
		RemoteArgv: func(registryURL, env string) []string {
			return []string{bin, "remote", "--registry", registryURL, "--environment-id", env, "--registration-bearer-stdin"}
		},
	}
}

// ReferenceTarget is the reference `codex` binary: `exec-server --listen ws://127.0.0.1:0`
// locally, `exec-server --remote …` behind a registry.
func ReferenceTarget(bin string) Target {
	return Target{
		Name: "reference",
		Argv: []string{bin, "exec-server", "--listen", "ws://127.0.0.1:0"},
		RemoteArgv: func(registryURL, env string) []string {
			return []string{bin, "exec-server", "--remote", registryURL, "--environment-id", env, "--registration-bearer-stdin"}
		},
	}
}

// childEnv is the environment of every executor the bench starts: ours, with a fresh
// CODEX_HOME and TMPDIR, and without proxy variables (http_stream_local talks to a
// loopback server, and the reference proxies loopback targets too, spec/jsonrpc.md §3.7).
func childEnv(home, tmp string) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasSuffix(strings.ToLower(k), "_proxy") {
			continue
		}
		env = append(env, kv)
	}
	return append(env, "CODEX_HOME="+home, "TMPDIR="+tmp)
}

// newHome creates a fresh CODEX_HOME under /var/tmp with a tmp directory inside.
func newHome(name string) (home, tmp string, err error) {
	home, err = os.MkdirTemp("/var/tmp", "executor-bench-"+name+"-")
	if err != nil {
		return "", "", err
	}
	tmp = filepath.Join(home, "tmp")
	if err := os.Mkdir(tmp, 0o700); err != nil {
		os.RemoveAll(home)
		return "", "", err
	}
	return home, tmp, nil
}

// instance is one running executor with its own CODEX_HOME and TMPDIR under /var/tmp.
type instance struct {
	target Target
	url    string
	cmd    *exec.Cmd
	home   string
	stderr *tailBuffer
	// scanDone is closed when the stdout scanner goroutine (owned by this instance) has
	// drained stdout, which happens once the executor exits.
	scanDone chan struct{}
}

// startConnected starts an instance of t and opens one initialized session on it. The
// caller closes the session, then stops the instance; on error nothing is left running.
func startConnected(ctx context.Context, t Target) (*instance, *session, error) {
	inst, err := startInstance(ctx, t)
	if err != nil {
		return nil, nil, err
	}
	sess, err := openSession(ctx, inst.url)
	if err != nil {
		inst.stop()
		return nil, nil, fmt.Errorf("connecting to %s: %w%s", t.Name, err, inst.stderr.suffix())
	}
	return inst, sess, nil
}

// startInstance starts t and waits for its URL.
func startInstance(ctx context.Context, t Target) (*instance, error) {
	home, tmp, err := newHome(t.Name)
	if err != nil {
		return nil, fmt.Errorf("starting %s: %w", t.Name, err)
	}
	cmd := exec.Command(t.Argv[0], t.Argv[1:]...)
	cmd.Env = append(childEnv(home, tmp), t.Env...)
	cmd.Dir = home
	in := &instance{target: t, cmd: cmd, home: home, stderr: &tailBuffer{max: stderrTail}, scanDone: make(chan struct{})}
	cmd.Stderr = in.stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		os.RemoveAll(home)
		return nil, fmt.Errorf("starting %s: %w", t.Name, err)
	}
	if err := cmd.Start(); err != nil {
		os.RemoveAll(home)
		return nil, fmt.Errorf("starting %s: %w", t.Name, err)
	}
	urlCh := make(chan string, 1)
	go in.scanStdout(stdout, urlCh)
	timer := time.NewTimer(startTimeout)
	defer timer.Stop()
	select {
	case u, ok := <-urlCh:
		if ok {
			in.url = u
			return in, nil
		}
		err = errors.New("exited before printing its URL")
	case <-timer.C:
		err = fmt.Errorf("printed no ws:// URL within %v", startTimeout)
	case <-ctx.Done():
		err = ctx.Err()
	}
	in.stop()
	return nil, fmt.Errorf("starting %s: %w%s", t.Name, err, in.stderr.suffix())
}

// scanStdout sends the first ws:// line on urlCh (or closes it at EOF without one) and
// drains the rest. Owner: the instance; it ends when the executor's stdout closes.
func (in *instance) scanStdout(stdout interface{ Read([]byte) (int, error) }, urlCh chan<- string) {
	defer close(in.scanDone)
	sc := bufio.NewScanner(stdout)
	sent := false
	for sc.Scan() {
		if line := strings.TrimSpace(sc.Text()); !sent && strings.HasPrefix(line, "ws://") {
			urlCh <- line
			sent = true
		}
	}
	if !sent {
		close(urlCh)
	}
}

// pid is the executor's process id.
func (in *instance) pid() int { return in.cmd.Process.Pid }

// stop sends SIGTERM, waits up to stopTimeout, then SIGKILLs; it reaps the process, waits
// for the scanner and removes the instance's directories.
func (in *instance) stop() {
	terminate(in.cmd)
	<-in.scanDone
	os.RemoveAll(in.home)
}

// terminate sends SIGTERM to a started cmd and reaps it (reap).
func terminate(cmd *exec.Cmd) {
	_ = cmd.Process.Signal(syscall.SIGTERM)
	reap(cmd)
}

// reap waits for a started cmd to exit up to stopTimeout, then SIGKILLs it; it returns
// once cmd is reaped.
func reap(cmd *exec.Cmd) {
	exited := make(chan struct{})
	go func() { // owner: reap, which waits for it below
		_ = cmd.Wait()
		close(exited)
	}()
	awaitOrKill(exited, cmd.Process)
}

// awaitOrKill waits for exited (closed once p is reaped) up to stopTimeout, then kills p
// and waits on.
func awaitOrKill(exited <-chan struct{}, p *os.Process) {
	t := time.NewTimer(stopTimeout)
	defer t.Stop()
	select {
	case <-exited:
	case <-t.C:
		_ = p.Kill()
		<-exited
	}
}

// tailBuffer keeps the last max bytes written to it. Safe for concurrent use: exec
// copies stderr on its own goroutine.
type tailBuffer struct {
	// mu guards buf against the exec copier and error reporting.
	mu  sync.Mutex
	max int
	buf []byte
}

func (b *tailBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf = append(b.buf, p...)
	if len(b.buf) > b.max {
		b.buf = append(b.buf[:0], b.buf[len(b.buf)-b.max:]...)
	}
	return len(p), nil
}

// suffix renders the kept stderr for an error message, or "" when empty.
func (b *tailBuffer) suffix() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := string(bytes.TrimSpace(b.buf))
	if s == "" {
		return ""
	}
	return "; stderr: " + s
}
