package e2e_test

import (
	"bytes"
	"os/exec"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
)

// TestExecCLI_PtySizeThroughRegistry: through the registry path (relay + Noise), `-t`
// starts the remote PTY at the local terminal's size and a local SIGWINCH resizes it.
func TestExecCLI_PtySizeThroughRegistry(t *testing.T) {
	m := startDev(t)
	cmd := exec.Command(remoteExecutorBin(t), "exec", "-t", "--registry", m[1], "--environment-id", m[2], "--token-file", m[3], "--",
		"sh", "-c", `echo "size $(stty size)"; trap 'echo "winch $(stty size)"; exit 0' WINCH; i=0; while [ $i -lt 500 ]; do sleep 0.02; i=$((i+1)); done; echo timeout`)
	tty, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 37, Cols: 91})
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu  sync.Mutex
		out bytes.Buffer
	)
	copied := make(chan struct{})
	go func() { // owns tty reads until EIO (the CLI exited)
		defer close(copied)
		buf := make([]byte, 4096)
		for {
			n, err := tty.Read(buf)
			mu.Lock()
			out.Write(buf[:n])
			mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait(); tty.Close(); <-copied })
	waitFor := func(want string) {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for {
			mu.Lock()
			ok := bytes.Contains(out.Bytes(), []byte(want))
			s := out.String()
			mu.Unlock()
			if ok {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("terminal output = %q, want %q", s, want)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	waitFor("size 37 91")
	if err := pty.Setsize(tty, &pty.Winsize{Rows: 44, Cols: 120}); err != nil {
		t.Fatal(err)
	}
	// The kernel sends SIGWINCH to the CLI's foreground group on the resize; send it
	// explicitly too in case the CLI is not the foreground group of this terminal.
	_ = cmd.Process.Signal(syscall.SIGWINCH)
	waitFor("winch 44 120")
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("executor exec: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("executor exec did not exit")
	}
}
