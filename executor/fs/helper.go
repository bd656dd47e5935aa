package fs

// Client side of the sandboxed filesystem helper (spec/sandbox.md §4).
//
// Protocol flow: the executor starts this binary through the sandbox launcher as
// `<exe> --codex-run-as-fs-helper` (command cwd "/", environment exactly PATH plus
// TMPDIR, network restricted, the executor binary readable), writes one JSON request to
// its stdin and closes it, and reads one JSON response from its stdout:
//
//	→ {"method":"fs/readFile","params":{"path":"file:///w/a.txt"},"denyGlobs":["/w/**/*.env"]}   (no sandbox member)
//	← {"ok":{"dataBase64":"aGkK"}}  or  {"error":{"code":-32004,"message":"No such file or directory (os error 2)"}}
//
// The format is internal (both ends are this binary); the wire params and results are
// reused as they are.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"syscall"

	"github.com/execlab/executor/jsonwire"
	"github.com/execlab/executor/sandbox"
	"github.com/execlab/executor/sandbox/policy"
)

// helperRequest and helperResponse are the helper's stdin and stdout documents.
type helperRequest struct {
	Method string `json:"method"`
	Params any    `json:"params"`
	// DenyGlobs are the policy's deny patterns, re-checked by read operations
	// (helper_globs.go).
	DenyGlobs []string `json:"denyGlobs,omitempty"`
}

type helperResponse struct {
	OK    json.RawMessage `json:"ok,omitempty"`
	Error *jsonwire.Error `json:"error,omitempty"`
}

// cappedBuffer keeps at most max bytes; a write beyond it fails, which stops the copy.
type cappedBuffer struct {
	buf bytes.Buffer
	max int
}

var errHelperOutputTooLarge = errors.New("fs sandbox helper output exceeds its limit")

func (b *cappedBuffer) Write(p []byte) (int, error) {
	if b.buf.Len()+len(p) > b.max {
		return 0, errHelperOutputTooLarge
	}
	return b.buf.Write(p)
}

// helperCall runs method with params (whose sandbox member must be nil) in a fresh
// sandboxed helper enforcing pol, and decodes its result into a new R. Errors are
// *jsonwire.Error: the helper's own (code and OS text), -32603 "fs sandbox helper
// failed with status …" for a failed helper, -32603 "failed to encode or decode fs
// sandbox helper message: …" for unparsable output, or the launcher's refusal
// (-32602 when no backend can enforce the plan). ctx cancellation kills the helper.
func helperCall[R any](ctx context.Context, s *Service, pol *policy.Policy, method string, params any) (*R, error) {
	raw, err := s.runHelper(ctx, pol, method, params)
	if err != nil {
		return nil, err
	}
	var res R
	if err := json.Unmarshal(raw, &res); err != nil {
		return nil, jsonwire.Internal("failed to encode or decode fs sandbox helper message: %s", err.Error())
	}
	return &res, nil
}

func (s *Service) runHelper(ctx context.Context, pol *policy.Policy, method string, params any) (json.RawMessage, error) {
	req, err := json.Marshal(helperRequest{Method: method, Params: params, DenyGlobs: pol.DenyGlobs})
	if err != nil {
		return nil, jsonwire.Internal("failed to encode or decode fs sandbox helper message: %s", err.Error())
	}
	hp := *pol
	hp.Network = policy.NetworkRestricted // the helper never needs the network (§4)
	l := s.opts.Sandbox
	env := []string{"PATH=" + s.opts.Path}
	if s.opts.TmpDir != "" {
		env = append(env, "TMPDIR="+s.opts.TmpDir)
	}
	w, err := l.Wrap(&sandbox.Request{
		Policy: &hp,
		Argv:   []string{l.Executable(), sandbox.FSHelperFlag},
		Cwd:    "/",
		Env:    env,
	})
	if err != nil {
		return nil, wireError(err)
	}
	if w == nil { // cannot happen: a policy is always wrapped
		return nil, errNoLauncher
	}

	cmd := exec.CommandContext(ctx, w.Path)
	cmd.Args, cmd.Env, cmd.Dir = w.Args, w.Env, w.Dir
	cmd.Stdin = bytes.NewReader(req)
	stdout := &cappedBuffer{max: maxHelperStdout}
	stderr := &cappedBuffer{max: maxHelperStderr}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	// Own process group, so cancellation kills bwrap and everything below it; SIGKILL
	// if the executor dies mid-call.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGKILL}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = helperWaitDelay
	err = cmd.Run()
	var exitErr *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exitErr):
		return nil, jsonwire.Internal("fs sandbox helper failed with status %s: %s",
			exitStatusText(exitErr), strings.TrimSpace(stderr.buf.String()))
	case errors.Is(err, errHelperOutputTooLarge):
		return nil, jsonwire.Internal("failed to encode or decode fs sandbox helper message: %s", err.Error())
	case ctx.Err() != nil:
		return nil, jsonwire.Internal("%s", ctx.Err().Error())
	default:
		return nil, jsonwire.Internal("%s", err.Error())
	}

	return decodeHelperResponse(stdout.buf.Bytes())
}

// decodeHelperResponse parses the helper's stdout: the raw ok result, or the helper's
// error (a *jsonwire.Error), or -32603 "failed to encode or decode fs sandbox helper
// message: …" for anything else.
func decodeHelperResponse(out []byte) (json.RawMessage, error) {
	var resp helperResponse
	if err := json.Unmarshal(out, &resp); err != nil {
		return nil, jsonwire.Internal("failed to encode or decode fs sandbox helper message: %s", err.Error())
	}
	switch {
	case resp.Error != nil:
		return nil, resp.Error
	case resp.OK == nil || string(resp.OK) == "null":
		return nil, jsonwire.Internal("failed to encode or decode fs sandbox helper message: response has neither ok nor error")
	}
	return resp.OK, nil
}

// exitStatusText renders an exit status as Rust's ExitStatus Display does: "exit
// status: 1", or "signal: 9 (SIGKILL)".
func exitStatusText(e *exec.ExitError) string {
	ws, ok := e.Sys().(syscall.WaitStatus)
	if ok && ws.Signaled() {
		return fmt.Sprintf("signal: %d (%s)", int(ws.Signal()), signalName(ws.Signal()))
	}
	return fmt.Sprintf("exit status: %d", e.ExitCode())
}

func signalName(sig syscall.Signal) string {
	names := map[syscall.Signal]string{syscall.SIGKILL: "SIGKILL", syscall.SIGTERM: "SIGTERM",
		syscall.SIGSEGV: "SIGSEGV", syscall.SIGABRT: "SIGABRT", syscall.SIGSYS: "SIGSYS",
		syscall.SIGINT: "SIGINT", syscall.SIGBUS: "SIGBUS", syscall.SIGPIPE: "SIGPIPE"}
	if n, ok := names[sig]; ok {
		return n
	}
	return sig.String()
}
