package process_test

import (
	"context"
	"strconv"
	"testing"

	"github.com/execlab/executor/executor/protocol"
)

func TestTerminate_RunningThenExited(t *testing.T) {
	for _, tc := range []struct {
		tty      bool
		wantCode int32
	}{{false, 137}, {true, 1}} {
		t.Run("tty="+strconv.FormatBool(tc.tty), func(t *testing.T) {
			m := newManager(t, nil)
			n := newNotifier(16)
			m.Attach(n)
			p := startParams("p", tmpURI(t), "sleep", "30")
			p.Tty = tc.tty
			mustStart(t, m, p)
			res, err := m.Terminate(context.Background(), &protocol.ProcessTerminateParams{ProcessID: "p"})
			if err != nil || !res.Running {
				t.Fatalf("Terminate = %+v, %v; want running true", res, err)
			}
			evs := n.untilClosed(t, "p")
			exit := evs[len(evs)-2]
			if exit.method != protocol.MethodProcessExited || exit.code != tc.wantCode {
				t.Fatalf("events %v: want exited with code %d before closed", evs, tc.wantCode)
			}
			// terminate after exit → running:false; unknown → running:false.
			for _, id := range []string{"p", "unknown"} {
				res, err := m.Terminate(context.Background(), &protocol.ProcessTerminateParams{ProcessID: id})
				if err != nil || res.Running {
					t.Fatalf("Terminate(%s) after exit = %+v, %v; want running false", id, res, err)
				}
			}
		})
	}
}

// Terminate kills the whole group, and an escaped grandchild holding the pipes cannot
// keep the process from closing.
func TestTerminate_GrandchildHoldingPipes(t *testing.T) {
	m := newManager(t, nil)
	// setsid escapes the group: the kill cannot reach it, the drain deadline ends the pumps.
	mustStart(t, m, startParams("p", tmpURI(t), "sh", "-c", "setsid sleep 3 & echo started; sleep 30"))
	waitOutput(t, m, "p", "started")
	if _, err := m.Terminate(context.Background(), &protocol.ProcessTerminateParams{ProcessID: "p"}); err != nil {
		t.Fatal(err)
	}
	_, res := readUntilClosed(t, m, "p")
	if *res.ExitCode != 137 {
		t.Fatalf("exit code = %d, want 137", *res.ExitCode)
	}
}

func TestExitCodes_SignalDeaths(t *testing.T) {
	tests := []struct {
		script string
		tty    bool
		want   int32
		signal int32
	}{
		{"kill -TERM $$", false, 143, 15},
		{"kill -SEGV $$", false, 139, 11},
		{"kill -INT $$", false, 130, 2},
		{"kill -TERM $$", true, 1, 15},
		{"exit 42", false, 42, 0},
		{"exit 42", true, 42, 0},
	}
	for _, tt := range tests {
		t.Run(tt.script+" tty="+strconv.FormatBool(tt.tty), func(t *testing.T) {
			m := newManager(t, nil)
			p := startParams("p", tmpURI(t), "sh", "-c", tt.script)
			p.Tty = tt.tty
			mustStart(t, m, p)
			_, res := readUntilClosed(t, m, "p")
			if *res.ExitCode != tt.want {
				t.Fatalf("exit code = %d, want %d", *res.ExitCode, tt.want)
			}
			// process/exitStatus (extension) names the signal the exit code may hide.
			st, err := m.ExitStatus(context.Background(), &protocol.ProcessExitStatusParams{ProcessID: "p"})
			if err != nil || st.Status != protocol.ExitStatusExited || st.ExitCode == nil || *st.ExitCode != tt.want {
				t.Fatalf("ExitStatus = %+v, %v; want exited with code %d", st, err, tt.want)
			}
			if got := signalOf(st); got != tt.signal {
				t.Fatalf("ExitStatus signal = %d, want %d", got, tt.signal)
			}
		})
	}
}

func signalOf(st *protocol.ProcessExitStatusResult) int32 {
	if st.Signal == nil {
		return 0
	}
	return *st.Signal
}

func TestExitStatus_NotExited(t *testing.T) {
	m := newManager(t, nil)
	st, err := m.ExitStatus(context.Background(), &protocol.ProcessExitStatusParams{ProcessID: "nope"})
	if err != nil || st.Status != protocol.ExitStatusUnknownProcess {
		t.Fatalf("unknown: %+v, %v", st, err)
	}
	mustStart(t, m, startParams("p", tmpURI(t), "sleep", "5"))
	st, err = m.ExitStatus(context.Background(), &protocol.ProcessExitStatusParams{ProcessID: "p"})
	if err != nil || st.Status != protocol.ExitStatusRunning || st.ExitCode != nil || st.Signal != nil {
		t.Fatalf("running: %+v, %v", st, err)
	}
	if _, err := m.Terminate(context.Background(), &protocol.ProcessTerminateParams{ProcessID: "p"}); err != nil {
		t.Fatal(err)
	}
	readUntilClosed(t, m, "p")
}
