package e2e_test

import (
	"bufio"
	"context"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestExecCLI_StdinTTYAndInterrupt runs `executor exec` against `executor dev`: -i forwards
// stdin, -t runs a PTY, and SIGINT to exec becomes process/signal{interrupt}.
func TestExecCLI_StdinTTYAndInterrupt(t *testing.T) {
	m := startDev(t)
	target := []string{"--registry", m[1], "--environment-id", m[2], "--token-file", m[3]}

	t.Run("stdin", func(t *testing.T) {
		cmd := exec.Command(remoteExecutorBin(t), append(append([]string{"exec", "-i"}, target...), "--", "head", "-n", "1")...)
		cmd.Stdin = strings.NewReader("first line\nsecond\n")
		out, err := cmd.Output()
		if err != nil || string(out) != "first line\n" {
			t.Errorf("exec -i head -n 1: got %q (%v), want %q", out, err, "first line\n")
		}
	})
	t.Run("tty", func(t *testing.T) {
		cmd := exec.Command(remoteExecutorBin(t), append(append([]string{"exec", "-t"}, target...), "--", "sh", "-c", "test -t 1 && echo on-a-pty")...)
		out, err := cmd.Output()
		if err != nil || strings.TrimRight(string(out), "\r\n") != "on-a-pty" {
			t.Errorf("exec -t: got %q (%v), want on-a-pty", out, err)
		}
	})
	t.Run("interrupt", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, remoteExecutorBin(t), append(append([]string{"exec"}, target...), "--",
			"sh", "-c", `trap 'echo got-int; exit 5' INT; echo ready; while :; do sleep 0.05; done`)...)
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(stdout)
		if !sc.Scan() || sc.Text() != "ready" {
			t.Fatalf("first line: got %q, want ready", sc.Text())
		}
		if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
			t.Fatal(err)
		}
		var rest []string
		for sc.Scan() {
			rest = append(rest, sc.Text())
		}
		err = cmd.Wait()
		ee, _ := err.(*exec.ExitError)
		if strings.Join(rest, "\n") != "got-int" || ee == nil || ee.ExitCode() != 5 {
			t.Errorf("after SIGINT: got output %q, err %v; want got-int and exit 5", rest, err)
		}
	})
}
