package refbin

import (
	"net"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestLaunch_URLLine: Launch returns the first URL line, keeps the other output, and its
// Stop reports how the process ended.
func TestLaunch_URLLine(t *testing.T) {
	cmd := exec.Command("sh", "-c", `trap 'exit 0' TERM; echo starting; echo after; echo '  ws://127.0.0.1:9 '; while :; do sleep 0.05; done`)
	p := Launch(t, cmd, &LaunchOptions{Exit: ExitClean})
	if got, want := p.URL(), "ws://127.0.0.1:9"; got != want {
		t.Fatalf("URL %q, want %q", got, want)
	}
	if err := p.Stop(); err != nil {
		t.Fatalf("Stop after a clean SIGTERM exit: %v", err)
	}
	if out := p.Output(); !strings.Contains(out, "starting\n") || !strings.Contains(out, "after\n") {
		t.Errorf("output %q, want every stdout line", out)
	}
}

// TestLaunch_Line: a custom Line's submatches come back; a process that ignores SIGTERM
// is killed after StopTimeout and Stop says so.
func TestLaunch_Line(t *testing.T) {
	cmd := exec.Command("sh", "-c", `trap '' TERM; echo 'control on 127.0.0.1:7'; exec sleep 30`)
	p := Launch(t, cmd, &LaunchOptions{Line: regexp.MustCompile(`^control on (\S+)$`), StopTimeout: 200 * time.Millisecond})
	if got := p.Match[1]; got != "127.0.0.1:7" {
		t.Fatalf("submatch %q, want 127.0.0.1:7", got)
	}
	if err := p.Stop(); err == nil || !strings.Contains(err.Error(), "ignored SIGTERM") {
		t.Fatalf("Stop of a process ignoring SIGTERM: %v, want an ignored-SIGTERM error", err)
	}
	select {
	case <-p.Done():
	default:
		t.Fatal("the process still runs after Stop")
	}
}

// TestStartProc_ExitBeforeLine: a process that exits without its line is an error naming
// the exit, with its output kept.
func TestStartProc_ExitBeforeLine(t *testing.T) {
	p, err := StartProc(exec.Command("sh", "-c", "echo no url here; echo oops >&2; exit 3"), &LaunchOptions{LineTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop()
	if _, err := p.AwaitLine(); err == nil || !strings.Contains(err.Error(), "exit status 3") {
		t.Fatalf("AwaitLine: %v, want an exit-before-line error", err)
	}
	if out := p.Output(); !strings.Contains(out, "no url here") || !strings.Contains(out, "oops") {
		t.Errorf("output %q, want stdout and stderr", out)
	}
}

// TestLaunch_Stdin: Stdin is written and the pipe stays open until Stop.
func TestLaunch_Stdin(t *testing.T) {
	cmd := exec.Command("sh", "-c", `read tok; echo "http://got/$tok"; cat >/dev/null; echo "stdin closed"`)
	p := Launch(t, cmd, &LaunchOptions{Stdin: "secret\n"})
	if got := p.URL(); got != "http://got/secret" {
		t.Fatalf("URL %q, want http://got/secret", got)
	}
	select {
	case <-p.Done():
		t.Fatal("the process exited: stdin was closed before Stop")
	case <-time.After(100 * time.Millisecond):
	}
}

// TestLockedBuffer_Bound: at most maxOutput bytes are kept; the rest is counted.
func TestLockedBuffer_Bound(t *testing.T) {
	b := LockedBuffer{Max: maxOutput}
	chunk := strings.Repeat("x", maxOutput/2+1)
	for range 3 {
		if n, err := b.Write([]byte(chunk)); n != len(chunk) || err != nil {
			t.Fatalf("Write: %d, %v; want %d, nil", n, err, len(chunk))
		}
	}
	if s := b.String(); !strings.HasPrefix(s, strings.Repeat("x", maxOutput)+"\n[") {
		t.Errorf("String kept %d bytes, want %d and a note", len(s), maxOutput)
	}
}

// TestLaunch_Kill: with Kill, Stop does not wait for a process that ignores SIGTERM.
func TestLaunch_Kill(t *testing.T) {
	cmd := exec.Command("sh", "-c", `trap '' TERM; echo http://127.0.0.1:1; exec sleep 30`)
	p := Launch(t, cmd, &LaunchOptions{Kill: true, StopTimeout: 20 * time.Second})
	start := time.Now()
	if err := p.Stop(); err == nil || strings.Contains(err.Error(), "ignored SIGTERM") {
		t.Fatalf("Stop with Kill: %v, want the kill's exit status", err)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Fatalf("Stop with Kill took %v, want no SIGTERM grace", took)
	}
}

// TestLockedBuffer_ZeroKeepsAll: the zero value has no bound.
func TestLockedBuffer_ZeroKeepsAll(t *testing.T) {
	var b LockedBuffer
	chunk := strings.Repeat("y", maxOutput)
	for range 2 {
		_, _ = b.Write([]byte(chunk))
	}
	if got := len(b.String()); got != 2*maxOutput {
		t.Errorf("kept %d bytes, want %d", got, 2*maxOutput)
	}
}

// FreeAddr hands out bindable loopback ports below the ephemeral range, never twice.
func TestFreeAddr_BelowEphemeralRangeAndDistinct(t *testing.T) {
	seen := map[string]bool{}
	for range 50 {
		a := FreeAddr(t)
		_, p, err := net.SplitHostPort(a)
		if err != nil {
			t.Fatal(err)
		}
		port, _ := strconv.Atoi(p)
		if port < 1024 || port >= 32768 || seen[a] {
			t.Fatalf("FreeAddr = %s (seen before: %v): want a new port below 32768", a, seen[a])
		}
		seen[a] = true
		ln, err := net.Listen("tcp", a)
		if err != nil {
			t.Fatalf("FreeAddr's %s is not bindable: %v", a, err)
		}
		ln.Close()
	}
}
