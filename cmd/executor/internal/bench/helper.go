package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/execlab/executor/relay/frame"
	"github.com/execlab/executor/relay/wsconn"
)

// HelperArg, right after `executor bench`, runs RunHelper instead of the bench: the
// process the memory rows keep their client sockets in, so that the bench process, whose
// heap they read, holds only the side being measured.
const HelperArg = "--internal-helper"

// Helper kinds.
const (
	// helperSockets dials raw rendezvous websockets (rendezvous_idle_memory).
	helperSockets = "sockets"
	// helperHarnesses runs a registry + rendezvous and connects harnesses through it to an
	// executor that registers there (idle_stream_memory).
	helperHarnesses = "harnesses"
)

// helperSpec is the first line the bench writes to a helper's stdin (JSON).
//
// Line protocol (helper stdout → bench), one line each:
//
//	sockets:   "ready N" once all N sockets are open
//	harnesses: "registry URL TOKEN", then "online" once an executor is connected for
//	           EnvironmentID; after the bench writes "go": "ready N" once N harness
//	           connections are initialized
//	any:       "error: TEXT", then exit status 1
//
// The helper holds everything until its stdin reaches EOF, then closes it all and exits.
type helperSpec struct {
	Kind          string         `json:"kind"`
	Sockets       []helperSocket `json:"sockets,omitempty"`
	Harnesses     int            `json:"harnesses,omitempty"`
	EnvironmentID string         `json:"environmentId,omitempty"`
}

// helperSocket is one websocket to hold: a signed rendezvous URL and, for a harness URL,
// the stream id it claims with a resume frame.
type helperSocket struct {
	URL    string `json:"url"`
	Stream string `json:"stream,omitempty"`
}

// RunHelper is the helper process: it reads a spec from stdin, holds what it asks for and
// reports on stdout (see helperSpec). It returns when stdin ends.
func RunHelper(ctx context.Context, stdin io.Reader, stdout io.Writer) error {
	in := bufio.NewReader(stdin)
	line, err := in.ReadBytes('\n')
	if err != nil {
		return fmt.Errorf("reading helper spec: %w", err)
	}
	var spec helperSpec
	if err := json.Unmarshal(line, &spec); err != nil {
		return fmt.Errorf("decoding helper spec: %w", err)
	}
	switch spec.Kind {
	case helperSockets:
		err = holdSockets(ctx, spec, in, stdout)
	case helperHarnesses:
		err = holdHarnesses(ctx, spec, in, stdout)
	default:
		err = fmt.Errorf("unknown helper kind %q", spec.Kind)
	}
	if err != nil {
		fmt.Fprintf(stdout, "error: %v\n", err)
	}
	return err
}

// parallel runs f(i) for i in [0, n) on up to workers goroutines and returns the first
// error; after an error the remaining indexes are skipped.
func parallel(n, workers int, f func(i int) error) error {
	var (
		next   atomic.Int64
		failed atomic.Bool
		wg     sync.WaitGroup
		errs   = make([]error, workers)
	)
	for w := range workers {
		wg.Add(1)
		go func() { // owner: parallel, which waits below
			defer wg.Done()
			for !failed.Load() {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				if err := f(i); err != nil {
					errs[w] = err
					failed.Store(true)
					return
				}
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// holdSockets dials every socket (executor URLs first: a harness needs its environment
// online), claims the harness streams, reports ready and waits for stdin to end.
func holdSockets(ctx context.Context, spec helperSpec, in *bufio.Reader, stdout io.Writer) error {
	conns := make([]*wsconn.Conn, len(spec.Sockets))
	defer func() {
		for _, c := range conns {
			if c != nil {
				c.Close()
			}
		}
	}()
	// Idle sockets: no pings from this side, and nothing reads them, so the rendezvous's
	// pings (first after 30 s) go unanswered; a measurement lasts seconds, well within the
	// 60 s pong deadline.
	opts := &wsconn.DialOptions{Conn: &wsconn.Options{PingInterval: time.Hour}}
	dial := func(i int) error {
		s := spec.Sockets[i]
		c, err := wsconn.Dial(ctx, s.URL, opts)
		if err != nil {
			return fmt.Errorf("dialling socket %d: %w", i, err)
		}
		conns[i] = c
		if s.Stream == "" {
			return nil
		}
		b, err := frame.Encode(nil, &frame.Frame{Version: frame.Version, StreamID: s.Stream, Body: &frame.Resume{}})
		if err != nil {
			return err
		}
		return c.WriteFrame(ctx, b)
	}
	var execs, harnesses []int
	for i, s := range spec.Sockets {
		if s.Stream == "" {
			execs = append(execs, i)
		} else {
			harnesses = append(harnesses, i)
		}
	}
	for _, group := range [][]int{execs, harnesses} {
		if err := parallel(len(group), idleDialers, func(i int) error { return dial(group[i]) }); err != nil {
			return err
		}
	}
	fmt.Fprintf(stdout, "ready %d\n", len(conns))
	_, _ = io.Copy(io.Discard, in) // hold until stdin ends
	return nil
}

// holdHarnesses runs a registry, reports its URL and token, waits for an executor of
// spec.EnvironmentID, and on "go" connects spec.Harnesses initialized harnesses to it.
func holdHarnesses(ctx context.Context, spec helperSpec, in *bufio.Reader, stdout io.Writer) error {
	reg, err := startRegistry(ctx)
	if err != nil {
		return err
	}
	defer reg.svc.Close()
	fmt.Fprintf(stdout, "registry %s %s\n", reg.svc.URL, reg.token)
	if err := reg.waitOnline(ctx, spec.EnvironmentID, nil); err != nil {
		return err
	}
	fmt.Fprintln(stdout, "online")
	if line, err := in.ReadString('\n'); err != nil || strings.TrimSpace(line) != "go" {
		return fmt.Errorf("waiting for go: got %q, %v", line, err)
	}
	sessions := make([]*session, spec.Harnesses)
	defer func() {
		for _, s := range sessions {
			if s != nil {
				s.close()
			}
		}
	}()
	err = parallel(spec.Harnesses, idleDialers, func(i int) error {
		s, err := openRemoteSession(ctx, reg.svc.URL, spec.EnvironmentID, reg.token)
		if err != nil {
			return fmt.Errorf("connecting harness %d: %w", i, err)
		}
		sessions[i] = s
		return nil
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "ready %d\n", len(sessions))
	_, _ = io.Copy(io.Discard, in)
	return nil
}

// helperProc is a running helper process, seen from the bench.
type helperProc struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stderr *tailBuffer
	// lines carries the helper's stdout lines; the scanner goroutine (owned by the
	// helperProc, waited for by stop) closes it at EOF.
	lines    chan string
	scanDone chan struct{}
}

// startHelper starts the helper and writes spec to it.
func startHelper(e *Env, spec helperSpec) (*helperProc, error) {
	if len(e.helper) == 0 {
		return nil, errors.New("no helper command configured (Config.Helper)")
	}
	raw, err := json.Marshal(spec)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(e.helper[0], e.helper[1:]...)
	h := &helperProc{cmd: cmd, stderr: &tailBuffer{max: stderrTail}, lines: make(chan string, 4), scanDone: make(chan struct{})}
	cmd.Stderr = h.stderr
	if h.stdin, err = cmd.StdinPipe(); err != nil {
		return nil, fmt.Errorf("starting helper: %w", err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("starting helper: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting helper: %w", err)
	}
	go func() { // owner: h; stop waits for it
		defer close(h.scanDone)
		defer close(h.lines)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			h.lines <- sc.Text()
		}
	}()
	if _, err := h.stdin.Write(append(raw, '\n')); err != nil {
		h.stop()
		return nil, fmt.Errorf("writing helper spec: %w%s", err, h.stderr.suffix())
	}
	return h, nil
}

// expect waits for the next line and returns what follows prefix in it.
func (h *helperProc) expect(ctx context.Context, prefix string) (string, error) {
	t := time.NewTimer(helperTimeout)
	defer t.Stop()
	select {
	case line, ok := <-h.lines:
		switch {
		case !ok:
			return "", fmt.Errorf("helper exited while waiting for %q%s", prefix, h.stderr.suffix())
		case strings.HasPrefix(line, prefix):
			return strings.TrimPrefix(line, prefix), nil
		}
		return "", fmt.Errorf("helper: got %q, want %q…%s", line, prefix, h.stderr.suffix())
	case <-t.C:
		return "", fmt.Errorf("helper: no %q within %v", prefix, helperTimeout)
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// send writes one line to the helper.
func (h *helperProc) send(line string) error {
	if _, err := io.WriteString(h.stdin, line+"\n"); err != nil {
		return fmt.Errorf("writing to helper: %w", err)
	}
	return nil
}

// stop closes the helper's stdin (it closes everything it holds and exits), waits for it
// up to stopTimeout, then kills it; it drains stdout and waits for the scanner.
func (h *helperProc) stop() {
	h.stdin.Close()
	go func() { // owner: stop; ends when the scanner closes lines, which stop waits for
		for range h.lines {
		}
	}()
	reap(h.cmd)
	<-h.scanDone
}

// raiseNoFile raises this process's soft RLIMIT_NOFILE to at least n when the hard limit
// allows it.
func raiseNoFile(n uint64) error {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		return fmt.Errorf("reading RLIMIT_NOFILE: %w", err)
	}
	if rl.Cur >= n {
		return nil
	}
	if rl.Max < n {
		return fmt.Errorf("RLIMIT_NOFILE hard limit %d is below the %d descriptors needed", rl.Max, n)
	}
	rl.Cur = n
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		return fmt.Errorf("raising RLIMIT_NOFILE: %w", err)
	}
	return nil
}
