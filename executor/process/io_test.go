package process_test

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/execlab/executor/executor/protocol"
)

func TestStart_TrueExitsAndCloses(t *testing.T) {
	m := newManager(t, nil)
	n := newNotifier(16)
	m.Attach(n)
	mustStart(t, m, startParams("proc-1", tmpURI(t), "true"))
	got := n.untilClosed(t, "proc-1")
	want := []string{"exited seq 1 code 0", "closed seq 2"}
	if gs := eventStrings(got); !slices.Equal(gs, want) {
		t.Fatalf("events = %v, want %v", gs, want)
	}
}

func TestStart_StreamsOutput(t *testing.T) {
	m := newManager(t, nil)
	mustStart(t, m, startParams("p", tmpURI(t), "sh", "-c", "printf 'session output\\n'"))
	out, res := readUntilClosed(t, m, "p")
	if got := string(out[protocol.StreamStdout]); got != "session output\n" {
		t.Fatalf("stdout = %q, want %q", got, "session output\n")
	}
	if !res.Exited || res.ExitCode == nil || *res.ExitCode != 0 || res.Failure != nil || res.SandboxDenied {
		t.Fatalf("final read = %+v, want exited 0, failure null, sandboxDenied false", res)
	}
}

func eventStrings(evs []event) []string {
	out := make([]string, len(evs))
	for i, e := range evs {
		out[i] = e.String()
	}
	return out
}

// exec_process_pushes_events: exactly stdout 1, stderr 2, exited 3 (code 7), closed 4.
func TestNotifications_ExactSequence(t *testing.T) {
	m := newManager(t, nil)
	n := newNotifier(16)
	m.Attach(n)
	mustStart(t, m, startParams("proc-1", tmpURI(t), "sh", "-c",
		"printf 'event output\\n'; sleep 0.1; printf 'event err\\n' >&2; exit 7"))
	got := eventStrings(n.untilClosed(t, "proc-1"))
	want := []string{
		`output seq 1 stdout "event output\n"`,
		`output seq 2 stderr "event err\n"`,
		"exited seq 3 code 7",
		"closed seq 4",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("events = %v, want %v", got, want)
	}

	// exec_process_replays_events_after_close: a read after close yields everything and
	// nextSeq counts exit and close.
	res, err := m.Read(context.Background(), &protocol.ProcessReadParams{ProcessID: "proc-1"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Chunks) != 2 || string(res.Chunks[0].Chunk) != "event output\n" || string(res.Chunks[1].Chunk) != "event err\n" {
		t.Fatalf("replayed chunks = %+v, want the two outputs", res.Chunks)
	}
	if res.NextSeq != 5 || !res.Exited || *res.ExitCode != 7 || !res.Closed {
		t.Fatalf("replay = nextSeq %d exited %v closed %v, want 5 true true", res.NextSeq, res.Exited, res.Closed)
	}
	// afterSeq = last output seq: nothing new but closed → returns at once.
	res, err = m.Read(context.Background(), &protocol.ProcessReadParams{ProcessID: "proc-1", AfterSeq: u64(2), WaitMs: u64(60_000)})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Chunks) != 0 || !res.Closed || res.NextSeq != 5 {
		t.Fatalf("read after close = %+v, want no chunks, closed, nextSeq 5", res)
	}
}

// Unit-level: replay after close of a single-chunk process gives nextSeq 4.
func TestRead_ReplayAfterCloseNextSeq(t *testing.T) {
	m := newManager(t, nil)
	mustStart(t, m, startParams("p", tmpURI(t), "echo", "hi"))
	readUntilClosed(t, m, "p")
	res, err := m.Read(context.Background(), &protocol.ProcessReadParams{ProcessID: "p"})
	if err != nil {
		t.Fatal(err)
	}
	if res.NextSeq != 4 || len(res.Chunks) != 1 || string(res.Chunks[0].Chunk) != "hi\n" {
		t.Fatalf("replay = %+v, want 1 chunk \"hi\\n\" and nextSeq 4", res)
	}
}

// exec_process_preserves_queued_events_before_subscribe: nothing attached while the
// process runs; a later read still sees everything, and attaching later replays nothing.
func TestRead_QueuedBeforeSubscribe(t *testing.T) {
	m := newManager(t, nil)
	mustStart(t, m, startParams("p", tmpURI(t), "sh", "-c", "echo queued"))
	out, _ := readUntilClosed(t, m, "p")
	if got := string(out[protocol.StreamStdout]); got != "queued\n" {
		t.Fatalf("stdout = %q, want %q", got, "queued\n")
	}
	n := newNotifier(4)
	m.Attach(n)
	select {
	case ev := <-n.ch:
		t.Fatalf("got replayed notification %v, want none", ev)
	default:
	}
}

// exec_process_retains_output_after_exit_until_streams_close: the parent exits while a
// grandchild holds the pipes; its output follows the exit seq and close waits for it.
func TestOutputAfterExit_GrandchildHoldsPipes(t *testing.T) {
	m := newManager(t, nil)
	n := newNotifier(16)
	m.Attach(n)
	mustStart(t, m, startParams("p", tmpURI(t), "sh", "-c", "(sleep 0.3; echo late) & exit 0"))
	first := <-n.ch
	if first.String() != "exited seq 1 code 0" {
		t.Fatalf("first event = %v, want exited seq 1 code 0", first)
	}
	res, err := m.Read(context.Background(), &protocol.ProcessReadParams{ProcessID: "p", AfterSeq: u64(1)})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Exited || res.Closed || res.NextSeq != 2 {
		t.Fatalf("read after exit = %+v, want exited, not closed, nextSeq 2", res)
	}
	// Long-poll from the exit seq: returns with the late output (seq 2).
	res, err = m.Read(context.Background(), &protocol.ProcessReadParams{ProcessID: "p", AfterSeq: u64(1), WaitMs: u64(10_000)})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Chunks) != 1 || res.Chunks[0].Seq != 2 || string(res.Chunks[0].Chunk) != "late\n" {
		t.Fatalf("late read = %+v, want seq 2 \"late\\n\"", res.Chunks)
	}
	rest := eventStrings(n.untilClosed(t, "p"))
	want := []string{`output seq 2 stdout "late\n"`, "closed seq 3"}
	if !slices.Equal(rest, want) {
		t.Fatalf("events after exit = %v, want %v", rest, want)
	}
}

// Return at once on an unseen exit: `true` just exited, afterSeq 0 →
// {chunks:[], nextSeq:2, exited:true, exitCode:0}.
func TestRead_ReturnsOnUnseenExit(t *testing.T) {
	m := newManager(t, nil)
	n := newNotifier(16)
	m.Attach(n)
	mustStart(t, m, startParams("p", tmpURI(t), "sh", "-c", "(sleep 0.5) & exit 3"))
	if ev := <-n.ch; ev.String() != "exited seq 1 code 3" {
		t.Fatalf("first event = %v, want exited seq 1 code 3", ev)
	}
	res, err := m.Read(context.Background(), &protocol.ProcessReadParams{ProcessID: "p", WaitMs: u64(60_000)})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Chunks) != 0 || res.NextSeq != 2 || !res.Exited || *res.ExitCode != 3 || res.Closed {
		t.Fatalf("read = %+v, want no chunks, nextSeq 2, exited 3, not closed", res)
	}
	n.untilClosed(t, "p")
}

func TestRead_MaxBytesBudget(t *testing.T) {
	m := newManager(t, nil)
	// Three separate writes, spaced so each is its own chunk.
	mustStart(t, m, startParams("p", tmpURI(t), "sh", "-c", "printf aaaa; sleep 0.1; printf bbbb; sleep 0.1; printf cccc"))
	readUntilClosed(t, m, "p")
	tests := []struct {
		after    uint64
		maxBytes uint64
		want     []string
		nextSeq  uint64
	}{
		{0, 1, []string{"aaaa"}, 2},                   // first chunk always returned
		{0, 4, []string{"aaaa"}, 2},                   // budget reached
		{0, 7, []string{"aaaa"}, 2},                   // next would exceed
		{0, 8, []string{"aaaa", "bbbb"}, 3},           // exactly fits
		{0, 100, []string{"aaaa", "bbbb", "cccc"}, 4}, // last returned + 1, not the process's next seq
		{3, 100, nil, 6},                              // nothing returned → process next seq
	}
	for _, tt := range tests {
		res, err := m.Read(context.Background(), &protocol.ProcessReadParams{ProcessID: "p", AfterSeq: &tt.after, MaxBytes: &tt.maxBytes})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, c := range res.Chunks {
			got = append(got, string(c.Chunk))
		}
		if !slices.Equal(got, tt.want) || res.NextSeq != tt.nextSeq {
			t.Errorf("read(after %d, max %d) = %q nextSeq %d, want %q nextSeq %d", tt.after, tt.maxBytes, got, res.NextSeq, tt.want, tt.nextSeq)
		}
	}
}

func TestRead_Errors(t *testing.T) {
	m := newManager(t, nil)
	_, err := m.Read(context.Background(), &protocol.ProcessReadParams{ProcessID: "nope"})
	wantRPCError(t, err, -32600, "unknown process id nope")
}

func TestPty_WriteThenRead(t *testing.T) {
	m := newManager(t, nil)
	p := startParams("pty", tmpURI(t), "sh", "-c", "read line; echo got:$line")
	p.Tty = true
	mustStart(t, m, p)
	res, err := m.Write(context.Background(), &protocol.ProcessWriteParams{ProcessID: "pty", Chunk: []byte("hello\n"), WriteID: "w1"})
	if err != nil || res.Status != protocol.WriteAccepted {
		t.Fatalf("Write = %+v, %v; want accepted", res, err)
	}
	out, fin := readUntilClosed(t, m, "pty")
	if got := string(out[protocol.StreamPty]); !strings.Contains(got, "got:hello") {
		t.Fatalf("pty output = %q, want it to contain got:hello", got)
	}
	if len(out) != 1 {
		t.Fatalf("streams = %v, want only pty", out)
	}
	if *fin.ExitCode != 0 {
		t.Fatalf("exit code = %d, want 0", *fin.ExitCode)
	}
}

func TestPipeStdin_WriteThenRead(t *testing.T) {
	m := newManager(t, nil)
	p := startParams("p", tmpURI(t), "sh", "-c", "read line; echo from-stdin:$line")
	p.PipeStdin = true
	mustStart(t, m, p)
	res, err := m.Write(context.Background(), &protocol.ProcessWriteParams{ProcessID: "p", Chunk: []byte("hello\n"), WriteID: "w1"})
	if err != nil || res.Status != protocol.WriteAccepted {
		t.Fatalf("Write = %+v, %v; want accepted", res, err)
	}
	out, _ := readUntilClosed(t, m, "p")
	if got := string(out[protocol.StreamStdout]); got != "from-stdin:hello\n" {
		t.Fatalf("stdout = %q, want %q", got, "from-stdin:hello\n")
	}
}

// exec_server_dedupes_retried_process_write_ids.
func TestWrite_DedupesWriteIDs(t *testing.T) {
	m := newManager(t, nil)
	p := startParams("p", tmpURI(t), "sh", "-c", "read a; echo line:$a; read b; echo line:$b")
	p.PipeStdin = true
	mustStart(t, m, p)
	for _, w := range []struct{ id, data string }{{"write-1", "first\n"}, {"write-1", "first\n"}, {"write-2", "second\n"}} {
		res, err := m.Write(context.Background(), &protocol.ProcessWriteParams{ProcessID: "p", Chunk: []byte(w.data), WriteID: w.id})
		if err != nil || res.Status != protocol.WriteAccepted {
			t.Fatalf("Write(%s) = %+v, %v; want accepted", w.id, res, err)
		}
	}
	out, _ := readUntilClosed(t, m, "p")
	if got := string(out[protocol.StreamStdout]); got != "line:first\nline:second\n" {
		t.Fatalf("stdout = %q, want %q", got, "line:first\nline:second\n")
	}
}

// exec_server_defaults_omitted_pipe_stdin_to_closed_stdin.
func TestWrite_StdinClosedWithoutPipeStdin(t *testing.T) {
	m := newManager(t, nil)
	mustStart(t, m, startParams("p", tmpURI(t), "sh", "-c", "cat; echo eof; sleep 0.2"))
	res, err := m.Write(context.Background(), &protocol.ProcessWriteParams{ProcessID: "p", Chunk: []byte("x"), WriteID: "w"})
	if err != nil || res.Status != protocol.WriteStdinClosed {
		t.Fatalf("Write = %+v, %v; want stdinClosed", res, err)
	}
	out, _ := readUntilClosed(t, m, "p")
	if got := string(out[protocol.StreamStdout]); got != "eof\n" {
		t.Fatalf("stdout = %q, want %q (child reads EOF)", got, "eof\n")
	}
}

func TestWrite_Statuses(t *testing.T) {
	m := newManager(t, nil)
	_, err := m.Write(context.Background(), &protocol.ProcessWriteParams{ProcessID: "x", Chunk: nil, WriteID: ""})
	wantRPCError(t, err, -32602, "writeId must not be empty")
	res, err := m.Write(context.Background(), &protocol.ProcessWriteParams{ProcessID: "x", WriteID: "w"})
	if err != nil || res.Status != protocol.WriteUnknownProcess {
		t.Fatalf("Write(unknown) = %+v, %v; want unknownProcess", res, err)
	}
	// After exit the stdin channel is gone: writes are accepted and discarded, for
	// pipes and PTYs alike (observed from codex 0.169.0 and 0.171.0).
	for _, tty := range []bool{false, true} {
		id := "p-" + strconv.FormatBool(tty)
		p := startParams(id, tmpURI(t), "true")
		p.PipeStdin, p.Tty = !tty, tty
		mustStart(t, m, p)
		readUntilClosed(t, m, id)
		for _, w := range []string{"late", "late", "later"} {
			res, err = m.Write(context.Background(), &protocol.ProcessWriteParams{ProcessID: id, Chunk: []byte("x"), WriteID: w})
			if err != nil || res.Status != protocol.WriteAccepted {
				t.Fatalf("Write(%s after exit, tty=%v) = %+v, %v; want accepted", w, tty, res, err)
			}
		}
	}
}

// exec_process_signal_interrupts_process: SIGINT to the group fires the shell's trap.
func TestSignal_InterruptRunsTrap(t *testing.T) {
	m := newManager(t, nil)
	mustStart(t, m, startParams("p", tmpURI(t), "sh", "-c",
		`trap 'echo signal:2; exit 7' INT; echo ready; while :; do sleep 0.05; done`))
	waitOutput(t, m, "p", "ready\n")
	if _, err := m.Signal(context.Background(), &protocol.ProcessSignalParams{ProcessID: "p", Signal: protocol.SignalInterrupt}); err != nil {
		t.Fatal(err)
	}
	out, res := readUntilClosed(t, m, "p")
	if got := string(out[protocol.StreamStdout]); !strings.Contains(got, "signal:2") {
		t.Fatalf("stdout = %q, want signal:2", got)
	}
	if *res.ExitCode != 7 {
		t.Fatalf("exit code = %d, want 7", *res.ExitCode)
	}
	// Unknown and exited processes: {} too.
	for _, id := range []string{"p", "unknown"} {
		if _, err := m.Signal(context.Background(), &protocol.ProcessSignalParams{ProcessID: id, Signal: protocol.SignalInterrupt}); err != nil {
			t.Fatalf("Signal(%s) = %v, want {}", id, err)
		}
	}
}
