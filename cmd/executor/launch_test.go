package main

import (
	"bufio"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/execlab/executor/internal/syncbuf"
)

// startResult is how a listener start ended: a URL (still running, killed at cleanup) or
// an exit status with its first stderr line.
type startResult struct {
	URL      string
	Exit     int
	ErrLine  string // first line of stderr ("Error: …"), compared only for exit 1
	Stderr   string
	TimedOut bool
}

func (r startResult) String() string {
	if r.URL != "" {
		return "listening"
	}
	return fmt.Sprintf("exit %d %q", r.Exit, r.ErrLine)
}

// launchServer starts a server command (ours or a reference) and waits up to 30 s for
// its first stdout line: a ws:// URL means it is listening, else it has exited (its code
// and the first line of its stderr) or timed out (killed). stop kills and reaps a
// listening server (the caller decides when); otherwise the process is reaped already
// and stop does nothing. A start failure is an exit of -1 with the error as ErrLine.
func launchServer(cmd *exec.Cmd) (startResult, func()) {
	nop := func() {}
	var stderr syncbuf.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return startResult{Exit: -1, ErrLine: err.Error()}, nop
	}
	if err := cmd.Start(); err != nil {
		return startResult{Exit: -1, ErrLine: err.Error()}, nop
	}
	line := make(chan string, 1)
	go func() { // reads the first stdout line; ends when the process's stdout closes
		sc := bufio.NewScanner(stdout)
		if sc.Scan() {
			line <- strings.TrimSpace(sc.Text())
		}
		close(line)
		_, _ = io.Copy(io.Discard, stdout)
	}()
	select {
	case l, ok := <-line:
		if ok && strings.HasPrefix(l, "ws://") {
			return startResult{URL: l}, sync.OnceFunc(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
		}
		_ = cmd.Wait()
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return startResult{TimedOut: true, Stderr: stderr.String()}, nop
	}
	first, _, _ := strings.Cut(stderr.String(), "\n")
	return startResult{Exit: cmd.ProcessState.ExitCode(), ErrLine: first, Stderr: stderr.String()}, nop
}
