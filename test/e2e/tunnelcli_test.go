package e2e_test

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// tunnelCLI is a running `executor tunnel`.
type tunnelCLI struct {
	cmd    *exec.Cmd
	out    *lockedBuffer
	waited chan error // Wait's result; whoever takes it puts it back
}

// launchTunnelCLI runs `executor tunnel args…`. Cleanup interrupts it (SIGINT), failing
// the test when it is still running 10 s later, and logs its output when the test failed.
func launchTunnelCLI(t *testing.T, args []string) *tunnelCLI {
	t.Helper()
	cmd := exec.Command(remoteExecutorBin(t), append([]string{"tunnel"}, args...)...)
	out := &lockedBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	tc := &tunnelCLI{cmd: cmd, out: out, waited: make(chan error, 1)}
	go func() { tc.waited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGINT)
		select {
		case err := <-tc.waited:
			tc.waited <- err
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			t.Errorf("executor tunnel ignored SIGINT for 10 s")
		}
		if t.Failed() {
			t.Logf("executor tunnel output:\n%s", out.String())
		}
	})
	return tc
}

// waitOutput polls the output (every 50 ms, at most 30 s) until ready holds for it.
func (tc *tunnelCLI) waitOutput(t *testing.T, what string, ready func(out string) bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !ready(tc.out.String()) {
		if time.Now().After(deadline) {
			t.Fatalf("executor tunnel did not report %s within 30 s:\n%s", what, tc.out.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// interruptHoldingIdleConn opens an idle tunnelled connection to the echo listener addr
// (which must not hold the exit up), sends SIGINT and requires exit status 0 within 10 s
// and no process left.
func (tc *tunnelCLI) interruptHoldingIdleConn(t *testing.T, addr string) {
	t.Helper()
	open, err := net.Dial("tcp", addr)
	if err == nil {
		defer open.Close()
		_ = open.SetDeadline(time.Now().Add(20 * time.Second))
		if _, err = open.Write([]byte{'x'}); err == nil { // echoed once: the connection is up
			_, err = io.ReadFull(open, make([]byte, 1))
		}
	}
	if err != nil {
		t.Fatalf("idle connection through %s: %v", addr, err)
	}
	_ = tc.cmd.Process.Signal(syscall.SIGINT)
	select {
	case err := <-tc.waited:
		tc.waited <- err // for Cleanup
		if err != nil {
			t.Fatalf("executor tunnel after SIGINT: %v, want exit 0", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("executor tunnel still running 10 s after SIGINT")
	}
	if err := syscall.Kill(tc.cmd.Process.Pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Fatalf("process %d still exists: %v", tc.cmd.Process.Pid, err)
	}
}

// checkEchoHalfClose talks to an echo server through the tunnel listener addr:
// interactive lines (each answered before the next is sent), then a half-close after
// which the rest comes back and then EOF.
func checkEchoHalfClose(t *testing.T, addr string) {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 30*time.Second)
	if err != nil {
		t.Fatalf("dialing %s: %v", addr, err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(30 * time.Second))
	buf := make([]byte, 64)
	for i := range 20 {
		msg := fmt.Sprintf("line %d\n", i)
		_, err := io.WriteString(c, msg)
		if err == nil {
			_, err = io.ReadFull(c, buf[:len(msg)])
		}
		if err != nil || string(buf[:len(msg)]) != msg {
			t.Fatalf("echo %d: %q, %v", i, buf[:len(msg)], err)
		}
	}
	if _, err := io.WriteString(c, "last"); err != nil {
		t.Fatalf("writing the last line: %v", err)
	}
	_ = c.(*net.TCPConn).CloseWrite()
	rest, err := io.ReadAll(c) // EOF only after the server saw our FIN and sent its own
	if err != nil || string(rest) != "last" {
		t.Fatalf("after half-close: %q, %v; want \"last\" then EOF", rest, err)
	}
}
