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

// startInstance starts t and waits for its URL.
func startInstance(ctx context.Context, t Target) (*instance, error) {
	home, err := os.MkdirTemp("/var/tmp", "executor-bench-"+t.Name+"-")
	if err != nil {
		return nil, fmt.Errorf("starting %s: %w", t.Name, err)
	}
	tmp := filepath.Join(home, "tmp")
	if err := os.Mkdir(tmp, 0o700); err != nil {
		os.RemoveAll(home)
		return nil, fmt.Errorf("starting %s: %w", t.Name, err)
	}
	cmd := exec.Command(t.Argv[0], t.Argv[1:]...)
	cmd.Env = append(os.Environ(), "CODEX_HOME="+home, "TMPDIR="+tmp)
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
	_ = in.cmd.Process.Signal(syscall.SIGTERM)
	exited := make(chan struct{})
	go func() { // owner: stop, which waits for it below
		_ = in.cmd.Wait()
		close(exited)
	}()
	select {
	case <-exited:
	case <-time.After(stopTimeout):
		_ = in.cmd.Process.Kill()
		<-exited
	}
	<-in.scanDone
	os.RemoveAll(in.home)
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
