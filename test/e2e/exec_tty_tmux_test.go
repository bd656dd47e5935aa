package e2e_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestExecCLI_TmuxTerminal drives `executor exec -t -- bash` in a real terminal: a tmux
// pane, against a local `executor serve`. The remote shell runs on this machine, so it
// reports through files in a temporary directory rather than through screen scraping.
//
//   - `stty size` inside equals the pane size (ptySize at start);
//   - after the window is resized, `stty size` follows within 1 s (SIGWINCH →
//     process/resizePty);
//   - Ctrl-C interrupts a remote `sleep` (raw mode: the byte reaches the remote PTY) and
//     the shell survives;
//   - `exit 3` ends the CLI with status 3;
//   - the local terminal is back in its cooked mode afterwards (`stty -a` before = after);
//   - without argv and without -t, the login shell gets a PTY automatically.
//
// tmux is required under CI=true (.ci/run installs the Debian package).
func TestExecCLI_TmuxTerminal(t *testing.T) {
	tmux, err := exec.LookPath("tmux")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("tmux is required under CI=true: %v", err)
		}
		t.Skipf("tmux not installed: %v", err)
	}
	url := startOursServe(t)
	bin := remoteExecutorBin(t)
	doomedURL, killDoomed := startKillableServe(t)     // for the lost-connection case
	dir, err := os.MkdirTemp("/var/tmp", "exec-tmux-") // short: tmux socket paths are limited
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	sock := filepath.Join(dir, "sock")
	tm := func(args ...string) string {
		t.Helper()
		out, err := exec.Command(tmux, append([]string{"-S", sock}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("tmux %q: %v: %s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	file := func(name string) string { return filepath.Join(dir, name) }
	script := fmt.Sprintf(`stty -a > %[1]s/before
%[2]s exec --url %[3]s --env PS1='remote$ ' -t -- bash --norc --noprofile
echo $? > %[1]s/exit.tmp && mv %[1]s/exit.tmp %[1]s/exit
stty -a > %[1]s/after
%[2]s exec --url %[3]s
echo $? > %[1]s/exit2.tmp && mv %[1]s/exit2.tmp %[1]s/exit2
%[2]s exec --url %[4]s -t -- bash --norc --noprofile
echo $? > %[1]s/exit3.tmp && mv %[1]s/exit3.tmp %[1]s/exit3
stty -a > %[1]s/after3
`, dir, bin, url, doomedURL)
	if err := os.WriteFile(file("run.sh"), []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	tm("-f", "/dev/null", "new-session", "-d", "-x", "100", "-y", "30", "-s", "s", "sh "+file("run.sh")+"; sleep 30")
	t.Cleanup(func() { _ = exec.Command(tmux, "-S", sock, "kill-server").Run() })
	send := func(line string) {
		t.Helper()
		tm("send-keys", "-t", "s", "-l", line)
		tm("send-keys", "-t", "s", "Enter")
	}
	waitFile := func(name string, limit time.Duration) string {
		t.Helper()
		deadline := time.Now().Add(limit)
		for {
			if b, err := os.ReadFile(file(name)); err == nil && len(b) > 0 {
				return strings.TrimSpace(string(b))
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s did not appear within %v; pane:\n%s", name, limit, tm("capture-pane", "-p", "-t", "s"))
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	paneSize := func() string { return tm("display", "-p", "-t", "s", "#{pane_height} #{pane_width}") }

	send("echo ready > " + file("ready"))
	waitFile("ready", 15*time.Second)

	// Initial size.
	send("stty size > " + file("size0"))
	if got, want := waitFile("size0", 5*time.Second), paneSize(); got != want {
		t.Errorf("stty size = %q, want the pane's %q", got, want)
	}

	// Resize: a background loop keeps writing the size; it must follow within 1 s.
	send(fmt.Sprintf("while :; do stty size > %[1]s/live.tmp && mv %[1]s/live.tmp %[1]s/live; sleep 0.02; done &", dir))
	waitFile("live", 5*time.Second)
	tm("resize-window", "-t", "s", "-x", "123", "-y", "41")
	resized := time.Now()
	want := paneSize()
	if want != "41 123" {
		t.Fatalf("pane size after resize-window = %q, want 41 123", want)
	}
	for {
		got := waitFile("live", time.Second)
		if got == want {
			t.Logf("stty size followed the resize in %v", time.Since(resized))
			break
		}
		if time.Since(resized) > time.Second {
			t.Fatalf("stty size = %q 1 s after the resize, want %q", got, want)
		}
		time.Sleep(10 * time.Millisecond)
	}
	send("kill %1")

	// Ctrl-C interrupts a remote sleep; the shell survives.
	send("sleep 100.25")
	deadline := time.Now().Add(5 * time.Second)
	for exec.Command("pgrep", "-fx", "sleep 100.25").Run() != nil {
		if time.Now().After(deadline) {
			t.Fatalf("remote sleep did not start; pane:\n%s", tm("capture-pane", "-p", "-t", "s"))
		}
		time.Sleep(10 * time.Millisecond)
	}
	tm("send-keys", "-t", "s", "C-c")
	// An interactive bash abandons the rest of a list on Ctrl-C: ask for $? separately.
	send("echo $? > " + file("sleeprc"))
	if got := waitFile("sleeprc", 5*time.Second); got != "130" {
		t.Errorf("sleep's status after Ctrl-C = %q, want 130 (SIGINT)", got)
	}
	send("echo alive > " + file("alive"))
	waitFile("alive", 5*time.Second)

	// exit 3 ends the CLI with status 3; the terminal is restored.
	send("exit 3")
	if got := waitFile("exit", 5*time.Second); got != "3" {
		t.Errorf("executor exec exit status = %s, want 3", got)
	}
	// The first line of stty -a holds the speed and the size (which the resize changed);
	// the rest is the mode.
	_, before, _ := strings.Cut(waitFile("before", time.Second), "\n")
	_, after, _ := strings.Cut(waitFile("after", time.Second), "\n")
	if before != after {
		t.Errorf("stty -a after exec differs from before:\nbefore: %s\nafter:  %s", before, after)
	}
	modes := strings.Fields(after)
	for _, m := range []string{"icanon", "echo", "isig", "opost", "icrnl"} {
		if !slices.Contains(modes, m) {
			t.Errorf("terminal not in cooked mode afterwards (no %s): %s", m, after)
		}
	}

	// No argv, no -t, both ends terminals: a login shell in a PTY (ssh's rule).
	send("test -t 0 && test -t 1 && echo pty > " + file("auto"))
	if got := waitFile("auto", 15*time.Second); got != "pty" {
		t.Errorf("login shell without argv: got %q, want a PTY", got)
	}
	send("exit 0")
	if got := waitFile("exit2", 5*time.Second); got != "0" {
		t.Errorf("second exec exit status = %s, want 0", got)
	}

	// Lost connection: the executor dies under a raw-mode session; the CLI fails and
	// the terminal is restored.
	send("echo ready > " + file("ready3"))
	waitFile("ready3", 15*time.Second)
	killDoomed()
	if got := waitFile("exit3", 10*time.Second); got == "0" {
		t.Errorf("exec whose executor died: exit status 0, want a failure")
	}
	_, after3, _ := strings.Cut(waitFile("after3", time.Second), "\n")
	if after3 != before {
		t.Errorf("stty -a after a lost connection differs from before:\nbefore: %s\nafter:  %s", before, after3)
	}
}

// startKillableServe runs `executor serve` and returns its URL and a func that SIGKILLs
// it (cleanup stops it too).
func startKillableServe(t *testing.T) (string, func()) {
	t.Helper()
	p := startServe(t)
	return p.URL(), func() { _ = p.Cmd.Process.Kill(); <-p.Done() }
}
