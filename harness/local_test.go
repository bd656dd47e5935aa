package harness_test

// Tests against real executors over loopback WebSockets: ours (built in TestMain) and the
// reference binary, with the same assertions for both.

import (
	"context"
	"errors"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/execlab/executor/executor/protocol"
	"github.com/execlab/executor/harness"
	"github.com/execlab/executor/jsonwire"
)

var uuidRE = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

// forEachServer runs fn against every server, each in its own subtest.
func forEachServer(t *testing.T, fn func(t *testing.T, url string)) {
	for _, s := range servers {
		t.Run(s.name, func(t *testing.T) { fn(t, startServer(t, s)) })
	}
}

// dial connects and, when init is true, completes the handshake.
func dial(t *testing.T, url string, init bool) (*harness.Client, protocol.InitializeResult) {
	t.Helper()
	c, err := harness.DialLocal(testCtx(t), url, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	var res protocol.InitializeResult
	if init {
		if res, err = c.Initialize(testCtx(t), "harness-test", ""); err != nil {
			t.Fatal(err)
		}
	}
	return c, res
}

// processEvents is everything a process reported, collected from notifications.
type processEvents struct {
	output   map[protocol.ExecOutputStream]string
	seqs     []uint64
	exitCode int32
	exitSeq  uint64
	closeSeq uint64
}

// collect reads notifications of processID until its process/closed. onOutput, if not
// nil, sees each output chunk as it arrives.
func collect(t *testing.T, ctx context.Context, c *harness.Client, processID string, onOutput func(string)) processEvents {
	t.Helper()
	ev := processEvents{output: map[protocol.ExecOutputStream]string{}, exitSeq: 0}
	for {
		var n harness.Notification
		var ok bool
		select {
		case n, ok = <-c.Notifications():
			if !ok {
				t.Fatalf("connection ended before process/closed: %v", c.Err())
			}
		case <-ctx.Done():
			t.Fatalf("waiting for process/closed: %v (so far %+v)", ctx.Err(), ev)
		}
		if id, _ := n.ProcessID(); id != processID {
			continue
		}
		switch n.Method {
		case protocol.MethodProcessOutput:
			o, err := n.ProcessOutput()
			if err != nil {
				t.Fatal(err)
			}
			ev.output[o.Stream] += string(o.Chunk)
			ev.seqs = append(ev.seqs, o.Seq)
			if onOutput != nil {
				onOutput(ev.output[o.Stream])
			}
		case protocol.MethodProcessExited:
			x, err := n.ProcessExited()
			if err != nil {
				t.Fatal(err)
			}
			ev.exitCode, ev.exitSeq = x.ExitCode, x.Seq
			ev.seqs = append(ev.seqs, x.Seq)
		case protocol.MethodProcessClosed:
			x, err := n.ProcessClosed()
			if err != nil {
				t.Fatal(err)
			}
			ev.closeSeq = x.Seq
			ev.seqs = append(ev.seqs, x.Seq)
		}
		// Done once closed and every seq up to it arrived: the reference sends exit and
		// close from separate tasks, so they can overtake other events.
		if ev.closeSeq != 0 && uint64(len(ev.seqs)) >= ev.closeSeq {
			return ev
		}
	}
}

// checkContiguous checks that seqs holds each of 1..len(seqs) exactly once, in any order.
func checkContiguous(t *testing.T, seqs []uint64) {
	t.Helper()
	sorted := append([]uint64(nil), seqs...)
	slices.Sort(sorted)
	for i, s := range sorted {
		if s != uint64(i+1) {
			t.Errorf("got seqs %v, want each of 1..%d once", seqs, len(seqs))
			return
		}
	}
}

func TestLocal_Handshake(t *testing.T) {
	forEachServer(t, func(t *testing.T, url string) {
		c, res := dial(t, url, true)
		if !uuidRE.MatchString(res.SessionID) {
			t.Errorf("got sessionId %q, want a UUIDv4", res.SessionID)
		}
		if res.EnvironmentInfo == nil {
			t.Fatal("got no environmentInfo in the initialize result")
		}
		info, err := c.EnvironmentInfo(testCtx(t))
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(info, *res.EnvironmentInfo) {
			t.Errorf("got environment/info %+v, want the initialize result's %+v", info, *res.EnvironmentInfo)
		}
		status, err := c.EnvironmentStatus(testCtx(t))
		if err != nil || status != "ready" {
			t.Errorf("got environment/status (%q, %v), want (\"ready\", nil)", status, err)
		}
	})
}

func TestLocal_ErrorsAreRPCErrors(t *testing.T) {
	tests := []struct {
		name     string
		init     bool
		method   string
		wantCode int64
		wantMsg  string
	}{
		{"unknown method", false, "nope/nothing", jsonwire.CodeMethodNotFound, "exec-server stub does not implement `nope/nothing` yet"},
		{"before initialize", false, "environment/info", jsonwire.CodeInvalidRequest, "client must call initialize before using environment info methods"},
		{"unknown process", true, "process/read", jsonwire.CodeInvalidRequest, "unknown process id ghost"},
	}
	forEachServer(t, func(t *testing.T, url string) {
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				c, _ := dial(t, url, tc.init)
				var params any
				if tc.method == "process/read" {
					params = protocol.ProcessReadParams{ProcessID: "ghost"}
				}
				err := c.Call(testCtx(t), tc.method, params, nil)
				var re *harness.RPCError
				if !errors.As(err, &re) {
					t.Fatalf("got %v, want *RPCError", err)
				}
				if re.Code != tc.wantCode || re.Message != tc.wantMsg {
					t.Errorf("got (%d, %q), want (%d, %q)", re.Code, re.Message, tc.wantCode, tc.wantMsg)
				}
			})
		}
	})
}

func TestLocal_ProcessEventsAndRead(t *testing.T) {
	forEachServer(t, func(t *testing.T, url string) {
		c, _ := dial(t, url, true)
		ctx := testCtx(t)
		res, err := c.StartProcess(ctx, protocol.ProcessStartParams{
			ProcessID: "proc-1",
			Argv:      []string{"/bin/sh", "-c", "printf out; printf err >&2; exit 7"},
			Cwd:       "file:///",
			Env:       map[string]string{},
		})
		if err != nil {
			t.Fatal(err)
		}
		if res.ProcessID != "proc-1" || res.SandboxType != "none" {
			t.Errorf("got start result %+v, want proc-1/none", res)
		}
		ev := collect(t, ctx, c, "proc-1", nil)
		if ev.output["stdout"] != "out" || ev.output["stderr"] != "err" {
			t.Errorf("got output %q, want stdout \"out\" and stderr \"err\"", ev.output)
		}
		if ev.exitCode != 7 || ev.exitSeq == 0 || ev.closeSeq != uint64(len(ev.seqs)) {
			t.Errorf("got exit %d at seq %d, closed at %d of %d events; want 7 and close last", ev.exitCode, ev.exitSeq, ev.closeSeq, len(ev.seqs))
		}
		checkContiguous(t, ev.seqs)
		r, err := c.ReadProcess(ctx, protocol.ProcessReadParams{ProcessID: "proc-1"})
		if err != nil {
			t.Fatal(err)
		}
		var got strings.Builder
		for _, ch := range r.Chunks {
			got.WriteString(string(ch.Chunk))
		}
		if !r.Exited || !r.Closed || r.ExitCode == nil || *r.ExitCode != 7 || r.NextSeq != ev.closeSeq+1 || got.Len() != 6 {
			t.Errorf("got read %+v (output %q), want exited, closed, code 7, nextSeq %d, 6 bytes", r, got.String(), ev.closeSeq+1)
		}
	})
}

func TestLocal_ProcessWriteTerminate(t *testing.T) {
	forEachServer(t, func(t *testing.T, url string) {
		c, _ := dial(t, url, true)
		ctx := testCtx(t)
		if _, err := c.StartProcess(ctx, protocol.ProcessStartParams{
			ProcessID: "cat", Argv: []string{"/bin/cat"}, Cwd: "file:///", Env: map[string]string{}, PipeStdin: true,
		}); err != nil {
			t.Fatal(err)
		}
		for _, w := range []struct{ id, data string }{{"w1", "hello\n"}, {"w1", "hello\n"}, {"w2", "bye\n"}} {
			st, err := c.WriteProcess(ctx, "cat", w.id, []byte(w.data))
			if err != nil || st != protocol.WriteAccepted {
				t.Fatalf("write %s: got (%q, %v), want accepted", w.id, st, err)
			}
		}
		// Calls made while consuming notifications are fine as long as the notification
		// buffer absorbs what arrives meanwhile (it does: cat prints two lines).
		terminated := false
		ev := collect(t, ctx, c, "cat", func(sofar string) {
			if sofar == "hello\nbye\n" && !terminated {
				terminated = true
				running, err := c.TerminateProcess(ctx, "cat")
				if err != nil || !running {
					t.Errorf("got terminate (%v, %v), want (true, nil)", running, err)
				}
			}
		})
		if ev.output["stdout"] != "hello\nbye\n" {
			t.Errorf("got stdout %q, want deduplicated \"hello\\nbye\\n\"", ev.output["stdout"])
		}
		if ev.exitCode != 137 {
			t.Errorf("got exit code %d after terminate, want 137", ev.exitCode)
		}
		st, err := c.WriteProcess(ctx, "ghost", "w", []byte("x"))
		if err != nil || st != protocol.WriteUnknownProcess {
			t.Errorf("got (%q, %v) for an unknown process, want unknownProcess", st, err)
		}
	})
}

func TestLocal_SignalInterrupt(t *testing.T) {
	forEachServer(t, func(t *testing.T, url string) {
		c, _ := dial(t, url, true)
		ctx := testCtx(t)
		if _, err := c.StartProcess(ctx, protocol.ProcessStartParams{
			ProcessID: "trap",
			Argv:      []string{"/bin/sh", "-c", `trap 'echo signal:2; exit 7' INT; echo ready; while :; do sleep 0.01; done`},
			Cwd:       "file:///", Env: map[string]string{}, PipeStdin: false,
		}); err != nil {
			t.Fatal(err)
		}
		ev := collect(t, ctx, c, "trap", func(sofar string) {
			if sofar == "ready\n" {
				if err := c.SignalProcess(ctx, "trap", protocol.SignalInterrupt); err != nil {
					t.Errorf("got signal error %v, want nil", err)
				}
			}
		})
		if ev.output["stdout"] != "ready\nsignal:2\n" || ev.exitCode != 7 {
			t.Errorf("got stdout %q exit %d, want the trap's output and exit 7", ev.output["stdout"], ev.exitCode)
		}
	})
}

func TestLocal_ResumeOnNewConnection(t *testing.T) {
	forEachServer(t, func(t *testing.T, url string) {
		c1, first := dial(t, url, true)
		if err := c1.Close(); err != nil {
			t.Fatal(err)
		}
		// The server notices the closed socket asynchronously: until it has detached the
		// session a resume is refused with -32010 (both implementations), so retry for a
		// bounded time on fresh connections.
		var c2 *harness.Client
		var again protocol.InitializeResult
		var err error
		for attempt := 0; ; attempt++ {
			c2, _ = dial(t, url, false)
			again, err = c2.Initialize(testCtx(t), "harness-test", first.SessionID)
			var re *harness.RPCError
			if err == nil || !errors.As(err, &re) || re.Code != jsonwire.CodeSessionAttached || attempt == 40 {
				break
			}
			c2.Close()
			time.Sleep(50 * time.Millisecond)
		}
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(again, first) {
			t.Errorf("got resumed result %+v, want the original %+v", again, first)
		}
		c3, _ := dial(t, url, false)
		_, err = c3.Initialize(testCtx(t), "harness-test", first.SessionID)
		var re *harness.RPCError
		if !errors.As(err, &re) || re.Code != jsonwire.CodeSessionAttached {
			t.Errorf("got %v resuming an attached session, want code %d", err, jsonwire.CodeSessionAttached)
		}
	})
}
