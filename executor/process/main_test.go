package process_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/execlab/executor/executor/process"
	"github.com/execlab/executor/executor/protocol"
	"github.com/execlab/executor/internal/reexec"
	"github.com/execlab/executor/jsonwire"
)

func TestMain(m *testing.M) {
	// Sandboxed starts and the process guard re-enter this test binary through
	// /proc/self/exe, exactly as cmd/executor does.
	reexec.TestMain()
	code := m.Run()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintf(os.Stderr, "goleak: %v\n", err)
			code = 1
		}
		if z := zombieChildren(); len(z) > 0 {
			fmt.Fprintf(os.Stderr, "zombie children left behind: %v\n", z)
			code = 1
		}
	}
	os.Exit(code)
}

// procsWhere lists the processes whose /proc/PID/<file> content satisfies match; a
// process whose file cannot be read is left out.
func procsWhere(file string, match func(b []byte) bool) []int {
	var out []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if b, err := os.ReadFile(filepath.Join("/proc", e.Name(), file)); err == nil && match(b) {
			out = append(out, pid)
		}
	}
	return out
}

// zombieChildren lists the pids of this process's children in state Z.
func zombieChildren() []int {
	self := os.Getpid()
	return procsWhere("stat", func(b []byte) bool {
		// pid (comm) state ppid ...; comm may contain spaces and parentheses.
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			return false
		}
		f := strings.Fields(s[i+1:])
		if len(f) < 2 {
			return false
		}
		ppid, _ := strconv.Atoi(f[1])
		return ppid == self && f[0] == "Z"
	})
}

// event is one notification as the fake notifier saw it.
type event struct {
	method string
	id     string
	seq    uint64
	stream protocol.ExecOutputStream
	chunk  []byte
	code   int32
	denied bool
}

func (e event) String() string {
	switch e.method {
	case protocol.MethodProcessOutput:
		return fmt.Sprintf("output seq %d %s %q", e.seq, e.stream, e.chunk)
	case protocol.MethodProcessExited:
		return fmt.Sprintf("exited seq %d code %d", e.seq, e.code)
	}
	return fmt.Sprintf("closed seq %d", e.seq)
}

// chanNotifier is a channel-based jsonrpc.Notifier: Notify blocks until the test
// receives (or ctx ends), like a connection whose queue is full.
type chanNotifier struct{ ch chan event }

func newNotifier(buf int) *chanNotifier { return &chanNotifier{ch: make(chan event, buf)} }

func (n *chanNotifier) Notify(ctx context.Context, method string, params any) error {
	var ev event
	ev.method = method
	switch p := params.(type) {
	case *protocol.ProcessOutputNotification:
		ev.id, ev.seq, ev.stream, ev.chunk = p.ProcessID, p.Seq, p.Stream, append([]byte(nil), p.Chunk...)
	case *protocol.ProcessExitedNotification:
		ev.id, ev.seq, ev.code, ev.denied = p.ProcessID, p.Seq, p.ExitCode, p.SandboxDenied
	case *protocol.ProcessClosedNotification:
		ev.id, ev.seq = p.ProcessID, p.Seq
	default:
		return fmt.Errorf("unexpected params %T", params)
	}
	select {
	case n.ch <- ev:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// untilClosed collects notifications for id until its process/closed.
func (n *chanNotifier) untilClosed(t *testing.T, id string) []event {
	t.Helper()
	var evs []event
	timeout := time.After(10 * time.Second)
	for {
		select {
		case ev := <-n.ch:
			if ev.id != id {
				continue
			}
			evs = append(evs, ev)
			if ev.method == protocol.MethodProcessClosed {
				return evs
			}
		case <-timeout:
			t.Fatalf("timed out waiting for process/closed of %s; got %v", id, evs)
		}
	}
}

func newManager(t *testing.T, opts *process.Options) *process.Manager {
	t.Helper()
	m := process.NewManager(opts)
	t.Cleanup(m.Close)
	return m
}

func tmpURI(t *testing.T) protocol.PathURI {
	t.Helper()
	return protocol.FromNative(t.TempDir())
}

// startParams returns pipe-mode params running argv with a minimal PATH.
func startParams(id string, cwd protocol.PathURI, argv ...string) *protocol.ProcessStartParams {
	return &protocol.ProcessStartParams{
		ProcessID: id,
		Argv:      argv,
		Cwd:       cwd,
		Env:       map[string]string{"PATH": "/usr/local/bin:/usr/bin:/bin"},
	}
}

func mustStart(t *testing.T, m *process.Manager, p *protocol.ProcessStartParams) {
	t.Helper()
	res, err := m.Start(context.Background(), p)
	if err != nil {
		t.Fatalf("Start(%s %q): %v", p.ProcessID, p.Argv, err)
	}
	if res.ProcessID != p.ProcessID || res.SandboxType != "none" {
		t.Fatalf("Start result = %+v, want processId %q sandboxType none", res, p.ProcessID)
	}
}

// readUntilClosed long-polls process/read until closed and returns all output bytes per
// stream and the final result.
func readUntilClosed(t *testing.T, m *process.Manager, id string) (map[protocol.ExecOutputStream][]byte, *protocol.ProcessReadResult) {
	t.Helper()
	out := map[protocol.ExecOutputStream][]byte{}
	var after uint64
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		res, err := m.Read(context.Background(), &protocol.ProcessReadParams{ProcessID: id, AfterSeq: &after, WaitMs: u64(2000)})
		if err != nil {
			t.Fatalf("Read(%s): %v", id, err)
		}
		for _, c := range res.Chunks {
			out[c.Stream] = append(out[c.Stream], c.Chunk...)
			after = c.Seq
		}
		if res.Closed {
			return out, res
		}
		if res.Exited && len(res.Chunks) == 0 {
			after = res.NextSeq - 1
		}
	}
	t.Fatalf("process %s did not close", id)
	return nil, nil
}

func u64(v uint64) *uint64 { return &v }

func str(s string) *string { return &s }

// wantRPCError checks err is a *jsonwire.Error with code and message.
func wantRPCError(t *testing.T, err error, code int, msg string) {
	t.Helper()
	var re *jsonwire.Error
	if !errors.As(err, &re) {
		t.Fatalf("got error %v (%T), want *jsonwire.Error %d %q", err, err, code, msg)
	}
	if re.Code != code || re.Message != msg {
		t.Fatalf("got error %d %q, want %d %q", re.Code, re.Message, code, msg)
	}
}

// wantKind checks error.data.kind of a process/start error; "" means spawnFailed.
func wantKind(t *testing.T, err error, kind string) {
	t.Helper()
	if kind == "" {
		kind = "spawnFailed"
	}
	var re *jsonwire.Error
	if !errors.As(err, &re) {
		t.Fatalf("got error %v (%T), want *jsonwire.Error", err, err)
	}
	if want := `{"kind":"` + kind + `"}`; string(re.Data) != want {
		t.Fatalf("error data = %s, want %s", re.Data, want)
	}
}

// waitOutput reads until the concatenated output contains want.
func waitOutput(t *testing.T, m *process.Manager, id string, want string) {
	t.Helper()
	var buf bytes.Buffer
	var after uint64
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		res, err := m.Read(context.Background(), &protocol.ProcessReadParams{ProcessID: id, AfterSeq: &after, WaitMs: u64(500)})
		if err != nil {
			t.Fatalf("Read(%s): %v", id, err)
		}
		for _, c := range res.Chunks {
			buf.Write(c.Chunk)
			after = c.Seq
		}
		if strings.Contains(buf.String(), want) {
			return
		}
		if res.Closed {
			break
		}
	}
	t.Fatalf("output of %s = %q, want it to contain %q", id, buf.String(), want)
}
