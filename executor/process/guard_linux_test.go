//go:build linux

package process_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/execlab/executor/executor/process"
	"github.com/execlab/executor/executor/protocol"
	"github.com/execlab/executor/sandbox"
	"github.com/execlab/executor/sandbox/sandboxtest"
)

// markedPids lists the processes whose environment holds marker (MARKER=value).
func markedPids(marker string) []int {
	return procsWhere("environ", func(b []byte) bool { return bytes.Contains(b, []byte(marker)) })
}

// newGuard starts a Guard; the caller closes it.
func newGuard(t *testing.T) *process.Guard {
	t.Helper()
	g, err := process.StartGuard()
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// setMarker puts marker (NAME=value) into p's environment.
func setMarker(p *protocol.ProcessStartParams, marker string) {
	k, v, _ := strings.Cut(marker, "=")
	p.Env[k] = v
}

func newMarker(t *testing.T) string {
	t.Helper()
	var b [8]byte
	_, _ = rand.Read(b[:])
	return "GUARD_TEST_MARKER=" + hex.EncodeToString(b[:])
}

// TestGuard_KillsEveryGroupMemberWhenTheExecutorGoes: when the executor's end of the
// guard's pipe closes — what the kernel does when the executor dies, kill -9 included —
// the guard kills the whole process group of every tracked process (the leader, its
// background children, a grandchild in a group of its own within the session), pipe and
// PTY processes alike, not just the leaders that Pdeathsig reaches.
func TestGuard_KillsEveryGroupMemberWhenTheExecutorGoes(t *testing.T) {
	g := newGuard(t)
	defer g.Close()
	m := newManager(t, &process.Options{Guard: g})
	marker := newMarker(t)
	script := `sleep 30 & sleep 31 & (set -m; sleep 32 & wait) & echo ready; wait`
	for _, tty := range []bool{false, true} {
		p := startParams("p"+strconv.FormatBool(tty), tmpURI(t), "sh", "-c", script)
		setMarker(p, marker)
		p.Tty = tty
		mustStart(t, m, p)
		waitOutput(t, m, p.ProcessID, "ready")
	}
	deadline := time.Now().Add(5 * time.Second)
	for len(markedPids(marker)) < 8 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if n := len(markedPids(marker)); n < 8 {
		t.Fatalf("%d marked processes before the guard acted, want 8 (2 × sh + 3 sleeps + a subshell)", n)
	}
	closeGuardAndWaitGone(t, g, marker, "marked processes")
}

// TestGuard_KillsSandboxedGroups: the same for a command run in the bubblewrap sandbox
// (launcher stage → bwrap → the command in its own pid namespace): once the guard's pipe
// closes, no process carrying the marker survives.
func TestGuard_KillsSandboxedGroups(t *testing.T) {
	l := sandboxtest.Launcher(t, sandbox.BackendBubblewrap)
	g := newGuard(t)
	defer g.Close()
	m := newManager(t, &process.Options{Guard: g, Sandbox: l})
	ws := t.TempDir()
	marker := newMarker(t)
	p := startParams("sandboxed", protocol.FromNative(ws), "sh", "-c", `sleep 30 & sleep 31 & echo ready; wait`)
	setMarker(p, marker)
	p.Env["HOME"] = ws
	p.Sandbox = sandboxtest.WorkspaceWrite(t, ws)
	mustStartSandboxed(t, m, p)
	waitOutput(t, m, p.ProcessID, "ready")
	before := markedPids(marker)
	if len(before) < 3 {
		t.Fatalf("%d marked processes in the sandbox, want at least sh and two sleeps", len(before))
	}
	closeGuardAndWaitGone(t, g, marker, fmt.Sprintf("the %d sandboxed processes", len(before)))
}

func mustStartSandboxed(t *testing.T, m *process.Manager, p *protocol.ProcessStartParams) {
	t.Helper()
	if _, err := m.Start(context.Background(), p); err != nil {
		t.Fatalf("Start(%s %q): %v", p.ProcessID, p.Argv, err)
	}
}

// TestGuard_KillsWhatIgnoresSIGTERM: a group that ignores SIGTERM (inherited by its
// children) survives the guard's SIGTERM and is killed by its SIGKILL once the grace
// has passed; the guard does not give up early because some processes died.
func TestGuard_KillsWhatIgnoresSIGTERM(t *testing.T) {
	g := newGuard(t)
	defer g.Close()
	m := newManager(t, &process.Options{Guard: g})
	marker := newMarker(t)
	p := startParams("stubborn", tmpURI(t), "sh", "-c", `trap '' TERM; sleep 30 & echo ready; while :; do sleep 0.1; done`)
	setMarker(p, marker)
	mustStart(t, m, p)
	waitOutput(t, m, p.ProcessID, "ready")
	closeGuardAndWaitGone(t, g, marker, "processes ignoring SIGTERM")
}

// closeGuardAndWaitGone closes g's pipe, as the executor's death does, and waits up to
// 5 s for every process carrying marker to be gone; what names them in the messages.
func closeGuardAndWaitGone(t *testing.T, g *process.Guard, marker, what string) {
	t.Helper()
	start := time.Now()
	if err := g.Close(); err != nil {
		t.Fatalf("closing the guard: %v", err)
	}
	// Close waited for the guard, which exits after its SIGKILL round; the kernel may
	// still be tearing the processes down.
	for time.Since(start) < 5*time.Second {
		if len(markedPids(marker)) == 0 {
			t.Logf("%s gone %v after the guard's pipe closed", what, time.Since(start).Round(time.Millisecond))
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("%s survived the guard: %v", what, markedPids(marker))
}
