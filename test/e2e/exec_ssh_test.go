package e2e_test

// `executor exec` as good as ssh (issue 15): stdin EOF, signals, exit statuses, the
// login shell, and the fallbacks against released executors that lack the protocol
// extensions (docs/protocol-extensions.md).

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/execlab/executor/internal/refbin"
)

// startOursServe runs `executor serve` on loopback and returns its URL.
func startOursServe(t *testing.T) string {
	t.Helper()
	env := []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + t.TempDir(), "TMPDIR=" + t.TempDir()}
	return startExecServer(t, "ours", remoteExecutorBin(t), env, "serve", "--listen", "ws://127.0.0.1:0").url
}

// startReferenceServe runs release r's exec-server on loopback and returns its URL.
func startReferenceServe(t *testing.T, r refbin.Release) string {
	t.Helper()
	env := []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + t.TempDir(), "CODEX_HOME=" + refbin.CodexHome(t)}
	return startExecServer(t, r.Version, r.Path, env, "exec-server", "--listen", "ws://127.0.0.1:0").url
}

// execResult is one finished `executor exec`.
type execResult struct {
	stdout, stderr string
	code           int
	took           time.Duration
}

// runExec runs `executor exec args…` with stdin, bounded by limit.
func runExec(t *testing.T, limit time.Duration, stdin string, args ...string) execResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, remoteExecutorBin(t), append([]string{"exec"}, args...)...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	start := time.Now()
	err := cmd.Run()
	res := execResult{stdout: out.String(), stderr: errb.String(), took: time.Since(start)}
	if ee, ok := err.(*exec.ExitError); ok {
		res.code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("executor exec %q: %v (stderr %s)", args, err, errb.String())
	}
	if ctx.Err() != nil {
		t.Fatalf("executor exec %q did not finish within %v (stdout %q, stderr %q)", args, limit, res.stdout, res.stderr)
	}
	return res
}

func TestExecCLI_StdinEOF(t *testing.T) {
	url := startOursServe(t)
	tests := []struct {
		name   string
		stdin  string
		args   []string
		want   string
		suffix bool // the PTY may echo the input before stty -echo runs
	}{
		{"cat", "hi\n", []string{"-i", "--", "cat"}, "hi\n", false},
		{"empty stdin", "", []string{"-i", "--", "cat"}, "", false},
		{"wc counts to EOF", "a\nb\nc\n", []string{"-i", "--", "wc", "-l"}, "3\n", false},
		{"sh reads a script", "echo from-script\nexit 0\n", []string{"-i", "--", "sh"}, "from-script\n", false},
		// PTY: closeStdin sends VEOF; a partial line is flushed first.
		{"pty partial line", "abc", []string{"-t", "--", "sh", "-c", "stty -echo; cat; echo END"}, "abcEND\r\n", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := runExec(t, 10*time.Second, tt.stdin, append([]string{"--url", url}, tt.args...)...)
			got := strings.TrimLeft(res.stdout, " ")
			if tt.suffix && strings.HasSuffix(got, tt.want) {
				got = tt.want
			}
			if res.code != 0 || got != tt.want {
				t.Fatalf("got stdout %q exit %d (stderr %q), want %q exit 0", res.stdout, res.code, res.stderr, tt.want)
			}
			if res.stderr != "" {
				t.Errorf("stderr = %q, want nothing", res.stderr)
			}
		})
	}
	// The bound: `echo hi | executor exec -i -- cat` exits 0 within 1 s.
	res := runExec(t, 10*time.Second, "hi\n", "--url", url, "-i", "--", "cat")
	if res.stdout != "hi\n" || res.code != 0 || res.took > time.Second {
		t.Fatalf("echo hi | exec -i -- cat: got %q exit %d in %v, want hi, exit 0 within 1 s", res.stdout, res.code, res.took)
	}
}

func TestExecCLI_SignalDeathExitStatus(t *testing.T) {
	url := startOursServe(t)
	tests := []struct {
		script string
		want   int
	}{
		{`kill -TERM $$`, 143},
		{`kill -HUP $$`, 129},
		{`kill -KILL $$`, 137},
		{`exit 3`, 3},
	}
	for _, tt := range tests {
		res := runExec(t, 10*time.Second, "", "--url", url, "--", "sh", "-c", tt.script)
		if res.code != tt.want {
			t.Errorf("exec -- sh -c %q: exit %d (stderr %q), want %d", tt.script, res.code, res.stderr, tt.want)
		}
		// With -t the wire exitCode of a signal death is 1 (the reference's PTY rule);
		// process/exitStatus names the signal, so exec still exits 128+N as ssh -t does.
		res = runExec(t, 10*time.Second, "", "--url", url, "-t", "--", "sh", "-c", tt.script)
		if res.code != tt.want {
			t.Errorf("exec -t -- sh -c %q: exit %d (stderr %q), want %d", tt.script, res.code, res.stderr, tt.want)
		}
	}
}

// startExecCLI starts `executor exec` and returns it with its (growing) outputs.
type runningExec struct {
	cmd            *exec.Cmd
	stdout, stderr *lockedBuffer
	done           chan struct{}
	err            error
}

func startExecCLI(t *testing.T, stdin string, args ...string) *runningExec {
	t.Helper()
	r := &runningExec{stdout: &lockedBuffer{}, stderr: &lockedBuffer{}, done: make(chan struct{})}
	r.cmd = exec.Command(remoteExecutorBin(t), append([]string{"exec"}, args...)...)
	r.cmd.Stdin = strings.NewReader(stdin)
	r.cmd.Stdout, r.cmd.Stderr = r.stdout, r.stderr
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { r.err = r.cmd.Wait(); close(r.done) }()
	t.Cleanup(func() {
		_ = r.cmd.Process.Kill()
		<-r.done
	})
	return r
}

// waitText waits until b contains want.
func waitText(t *testing.T, what string, b *lockedBuffer, want string, limit time.Duration) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !strings.Contains(b.String(), want) {
		if time.Now().After(deadline) {
			t.Fatalf("%s = %q, want it to contain %q within %v", what, b.String(), want, limit)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// exitCode waits for r (bounded) and returns its exit status.
func (r *runningExec) exitCode(t *testing.T, limit time.Duration) int {
	t.Helper()
	select {
	case <-r.done:
	case <-time.After(limit):
		t.Fatalf("executor exec did not exit within %v (stdout %q, stderr %q)", limit, r.stdout.String(), r.stderr.String())
	}
	if ee, ok := r.err.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	if r.err != nil {
		t.Fatal(r.err)
	}
	return 0
}

// TestExecCLI_SignalsForwarded: SIGTERM, SIGHUP and SIGQUIT to `executor exec` reach the
// remote process (process/sendSignal on our executor).
func TestExecCLI_SignalsForwarded(t *testing.T) {
	url := startOursServe(t)
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			r := startExecCLI(t, "", "--url", url, "--", "sh", "-c",
				`trap 'echo got-TERM; exit 71' TERM; trap 'echo got-HUP; exit 72' HUP; trap 'echo got-QUIT; exit 73' QUIT; trap 'echo got-INT; exit 74' INT; echo ready; while :; do sleep 0.02; done`)
			waitText(t, "stdout", r.stdout, "ready\n", 10*time.Second)
			if err := r.cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			want := map[syscall.Signal]int{syscall.SIGTERM: 71, syscall.SIGHUP: 72, syscall.SIGQUIT: 73, syscall.SIGINT: 74}[sig]
			if code := r.exitCode(t, 10*time.Second); code != want || !strings.Contains(r.stdout.String(), "got-") {
				t.Fatalf("after %v: exit %d, stdout %q; want exit %d and the trap's output", sig, code, r.stdout.String(), want)
			}
		})
	}
}

// TestExecCLI_LoginShellWithoutArgv: no argv runs the remote user's login shell; with
// stdin not a terminal, no PTY (ssh's rule) and stdin is the script.
func TestExecCLI_LoginShellWithoutArgv(t *testing.T) {
	url := startOursServe(t)
	res := runExec(t, 10*time.Second, "test -t 0 && echo tty || echo no-tty\ncase $- in *i*) echo interactive;; esac\nshopt -q login_shell 2>/dev/null && echo login\necho done\n", "--url", url)
	if res.code != 0 || !strings.Contains(res.stdout, "no-tty\n") || !strings.HasSuffix(res.stdout, "done\n") {
		t.Fatalf("got %q exit %d (stderr %q), want no-tty … done", res.stdout, res.code, res.stderr)
	}
	if sh, _ := os.ReadFile("/etc/passwd"); bytes.Contains(sh, []byte(":/bin/bash\n")) && os.Getuid() == 0 && !strings.Contains(res.stdout, "login\n") {
		t.Errorf("got %q, want a bash login shell", res.stdout)
	}
	// -t forces the PTY for the login shell.
	res = runExec(t, 10*time.Second, "test -t 0 && echo on-tty; exit 5\n", "--url", url, "-t")
	if res.code != 5 || !strings.Contains(res.stdout, "on-tty") {
		t.Fatalf("-t without argv: got %q exit %d (stderr %q), want on-tty exit 5", res.stdout, res.code, res.stderr)
	}
	if res := runExec(t, 5*time.Second, "", "--url", url, "-t", "-T"); res.code != 2 {
		t.Errorf("-t -T: exit %d, want 2 (usage)", res.code)
	}
}

// TestExecCLI_FallbackAgainstReference: released executors have none of the extensions;
// `executor exec` still works, says once what is missing, and can be ended.
func TestExecCLI_FallbackAgainstReference(t *testing.T) {
	refbin.ForEachRelease(t, func(t *testing.T, rel refbin.Release) {
		url := startReferenceServe(t, rel)

		// echo hi | exec -i -- cat: prints hi, then says how to end it; Ctrl-C (SIGINT,
		// forwarded as process/signal interrupt) does.
		r := startExecCLI(t, "hi\n", "--url", url, "-i", "--", "cat")
		waitText(t, "stderr", r.stderr, "stdin EOF not supported by this executor", 10*time.Second)
		waitText(t, "stdout", r.stdout, "hi\n", 5*time.Second)
		if !strings.Contains(r.stderr.String(), "Ctrl-C") {
			t.Errorf("stderr = %q, want it to say how to end the command", r.stderr.String())
		}
		if err := r.cmd.Process.Signal(syscall.SIGINT); err != nil {
			t.Fatal(err)
		}
		if code := r.exitCode(t, 10*time.Second); code != 130 {
			t.Errorf("after Ctrl-C: exit %d, want 130 (cat killed by SIGINT)", code)
		}

		// -t: no ptySize (24×80, said once), EOF as ^D written to the PTY.
		res := runExec(t, 20*time.Second, "abc", "--url", url, "-t", "--", "sh", "-c", "stty -echo; stty size; cat; echo END")
		if res.code != 0 || !strings.Contains(res.stdout, "24 80") || !strings.Contains(res.stdout, "abcEND") {
			t.Errorf("-t: got %q exit %d (stderr %q), want 24 80, abcEND, exit 0", res.stdout, res.code, res.stderr)
		}

		// SIGTERM: no process/sendSignal → process/terminate, said once; exit 137.
		r = startExecCLI(t, "", "--url", url, "--", "sh", "-c", "echo ready; while :; do sleep 0.02; done")
		waitText(t, "stdout", r.stdout, "ready\n", 10*time.Second)
		if err := r.cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		if code := r.exitCode(t, 10*time.Second); code != 137 || !strings.Contains(r.stderr.String(), "forwarding SIGTERM not supported by this executor") {
			t.Errorf("after SIGTERM: exit %d, stderr %q; want 137 and the note", code, r.stderr.String())
		}

		// Exit statuses are the released executor's: 143 for SIGTERM with pipes.
		if res := runExec(t, 20*time.Second, "", "--url", url, "--", "sh", "-c", "kill -TERM $$"); res.code != 143 {
			t.Errorf("kill -TERM $$: exit %d, want 143", res.code)
		}
	})
}
