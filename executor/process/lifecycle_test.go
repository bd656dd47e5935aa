package process_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/execlab/executor/executor/process"
	"github.com/execlab/executor/executor/protocol"
)

// Closed entries stay readable for 30 s, then the id is unknown and reusable.
func TestRetention_ClosedEntryEvictedAfter30s(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := process.NewManager(nil)
		defer m.Close()
		cwd := protocol.FromNative(t.TempDir())
		mustStart(t, m, startParams("p", cwd, "echo", "kept"))
		readUntilClosed(t, m, "p")

		time.Sleep(process.DefaultClosedRetention - time.Second)
		res, err := m.Read(context.Background(), &protocol.ProcessReadParams{ProcessID: "p"})
		if err != nil || len(res.Chunks) != 1 {
			t.Fatalf("read 29 s after close = %+v, %v; want the retained chunk", res, err)
		}
		_, err = m.Start(context.Background(), startParams("p", cwd, "true"))
		wantRPCError(t, err, -32600, "process p already exists")

		time.Sleep(time.Second)
		_, err = m.Read(context.Background(), &protocol.ProcessReadParams{ProcessID: "p"})
		wantRPCError(t, err, -32600, "unknown process id p")
		w, err := m.Write(context.Background(), &protocol.ProcessWriteParams{ProcessID: "p", WriteID: "w"})
		if err != nil || w.Status != protocol.WriteUnknownProcess {
			t.Fatalf("write after eviction = %+v, %v; want unknownProcess", w, err)
		}
		mustStart(t, m, startParams("p", cwd, "true"))
		readUntilClosed(t, m, "p")
	})
}

// Exited-but-unclosed entries never expire.
func TestRetention_ExitedUnclosedKept(t *testing.T) {
	m := newManager(t, &process.Options{ClosedRetention: 20 * time.Millisecond})
	n := newNotifier(16)
	m.Attach(n)
	mustStart(t, m, startParams("p", tmpURI(t), "sh", "-c", "(sleep 30) & exit 0"))
	if ev := <-n.ch; ev.method != protocol.MethodProcessExited {
		t.Fatalf("first event = %v, want exited", ev)
	}
	time.Sleep(100 * time.Millisecond)
	res, err := m.Read(context.Background(), &protocol.ProcessReadParams{ProcessID: "p"})
	if err != nil || !res.Exited || res.Closed {
		t.Fatalf("read = %+v, %v; want exited, not closed, still known", res, err)
	}
	// Close (deferred) kills the group, including the grandchild.
}

// blockingNotifier never accepts a notification: Notify blocks until ctx ends.
type blockingNotifier struct {
	entered   chan struct{}
	cancelled atomic.Int32
}

func (b *blockingNotifier) Notify(ctx context.Context, method string, params any) error {
	select {
	case b.entered <- struct{}{}:
	default:
	}
	<-ctx.Done()
	b.cancelled.Add(1)
	return ctx.Err()
}

// A pump blocked in Notify stalls (back-pressure) and is released by a detach; events
// stay readable.
func TestAttach_DetachReleasesBlockedPump(t *testing.T) {
	m := newManager(t, nil)
	b := &blockingNotifier{entered: make(chan struct{}, 1)}
	m.Attach(b)
	mustStart(t, m, startParams("p", tmpURI(t), "sh", "-c", "echo one; echo two >&2"))
	<-b.entered
	m.Attach(nil)
	out, res := readUntilClosed(t, m, "p")
	if string(out[protocol.StreamStdout]) != "one\n" || string(out[protocol.StreamStderr]) != "two\n" || *res.ExitCode != 0 {
		t.Fatalf("out = %q, exit %d; want one/two, 0", out, *res.ExitCode)
	}
	if b.cancelled.Load() != 1 {
		t.Fatalf("cancelled Notify calls = %d, want 1", b.cancelled.Load())
	}
}

// Events produced while detached are never replayed to a later attachment; new ones are.
func TestAttach_ReattachGetsOnlyNewEvents(t *testing.T) {
	m := newManager(t, nil)
	p := startParams("p", tmpURI(t), "sh", "-c", "echo before; read x; echo after:$x")
	p.PipeStdin = true
	mustStart(t, m, p)
	waitOutput(t, m, "p", "before\n")
	n := newNotifier(16)
	m.Attach(n)
	if _, err := m.Write(context.Background(), &protocol.ProcessWriteParams{ProcessID: "p", WriteID: "w", Chunk: []byte("go\n")}); err != nil {
		t.Fatal(err)
	}
	got := eventStrings(n.untilClosed(t, "p"))
	want := []string{`output seq 2 stdout "after:go\n"`, "exited seq 3 code 0", "closed seq 4"}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
		t.Fatalf("events after attach = %v, want %v", got, want)
	}
}

// Close kills everything, waits for every goroutine, and refuses later starts.
func TestClose_KillsAndRefuses(t *testing.T) {
	m := process.NewManager(nil)
	cwd := tmpURI(t)
	for _, id := range []string{"a", "b"} {
		p := startParams(id, cwd, "sh", "-c", "setsid sleep 5 & sleep 30")
		p.PipeStdin = id == "b"
		mustStart(t, m, p)
	}
	tty := startParams("c", cwd, "sleep", "30")
	tty.Tty = true
	mustStart(t, m, tty)
	done := make(chan struct{})
	go func() { m.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Close did not return")
	}
	m.Close() // idempotent
	_, err := m.Start(context.Background(), startParams("d", cwd, "true"))
	var re interface{ Error() string }
	if err == nil || !errors.As(err, &re) {
		t.Fatalf("Start after Close = %v, want an error", err)
	}
}

// 10,000 rapid starts of /bin/true with bounded concurrency all succeed and leave no
// zombies (TestMain checks /proc for zombie children).
func TestStart_RapidTrue(t *testing.T) {
	total := 10_000
	if testing.Short() {
		total = 500
	}
	const workers = 8
	m := newManager(t, nil)
	cwd := tmpURI(t)
	var next atomic.Int64
	var failed atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := next.Add(1)
				if i > int64(total) {
					return
				}
				id := "t" + itoa(i)
				if _, err := m.Start(context.Background(), startParams(id, cwd, "/bin/true")); err != nil {
					t.Errorf("start %s: %v", id, err)
					failed.Add(1)
					return
				}
				for {
					res, err := m.Read(context.Background(), &protocol.ProcessReadParams{ProcessID: id, AfterSeq: u64(1), WaitMs: u64(5000)})
					if err != nil {
						t.Errorf("read %s: %v", id, err)
						return
					}
					if res.Closed {
						if *res.ExitCode != 0 {
							t.Errorf("%s exit code %d", id, *res.ExitCode)
						}
						break
					}
				}
			}
		}()
	}
	wg.Wait()
	if failed.Load() > 0 {
		t.Fatalf("%d starts failed", failed.Load())
	}
	if z := zombieChildren(); len(z) > 0 {
		t.Fatalf("zombies after %d starts: %v", total, z)
	}
}

func itoa(i int64) string {
	var b [20]byte
	n := len(b)
	for {
		n--
		b[n] = byte('0' + i%10)
		i /= 10
		if i == 0 {
			return string(b[n:])
		}
	}
}
