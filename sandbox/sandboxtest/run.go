package sandboxtest

import (
	"bytes"
	"context"
	"errors"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/execlab/executor/sandbox"
)

// runTimeout caps one Run: a command still running then is killed (its exit is then
// a signal death, not a hang of the test).
const runTimeout = 30 * time.Second

// Result is how a command run by Run ended.
type Result struct {
	Stdout, Stderr string
	// Code is the exit code, or 128+N when signal N ended the command (as a shell
	// reports it).
	Code int
	// Cmd is what the launcher wrapped the request into.
	Cmd *sandbox.Command
}

// Run wraps req with l, as process/start does, and runs the wrapped command to
// completion (at most runTimeout). A wrapping error, or a failure to run the command at
// all, fails t; an exit code or signal is a Result.
func Run(t testing.TB, l *sandbox.Launcher, req *sandbox.Request) Result {
	t.Helper()
	cmd, err := l.Wrap(req)
	if err != nil {
		t.Fatalf("wrapping: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	c := exec.CommandContext(ctx, cmd.Path)
	c.Args, c.Env, c.Dir = cmd.Args, cmd.Env, cmd.Dir
	var o, e bytes.Buffer
	c.Stdout, c.Stderr = &o, &e
	err = c.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			code = 128 + int(ws.Signal())
		}
	} else if err != nil {
		t.Fatalf("running %q: %v", req.Argv, err)
	}
	return Result{Stdout: o.String(), Stderr: e.String(), Code: code, Cmd: cmd}
}
