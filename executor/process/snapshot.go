package process

// Shell snapshots on process/start (spec/capabilities-0.171.0.md §3; package
// executor/shellsnap owns the scripts, parser, cache and rewrite).
//
// Flow, after start's argv check: Request.Plan decides whether the snapshot applies;
// if so the session's cache (Options.ShellSnapshots) returns the key's snapshot,
// capturing it first through captureSnapshot — the prepared command with the capture
// script, under the same sandbox wrapper, cwd, environment and arg0; then the argv is
// rewritten and the environment recomposed. Every capture failure runs the command as
// requested.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"

	"github.com/execlab/executor/executor/protocol"
	"github.com/execlab/executor/executor/shellsnap"
	"github.com/execlab/executor/jsonwire"
	"github.com/execlab/executor/sandbox/policy"
)

// errSnapshotUnsupported answers a shellSnapshot when the Manager has no cache (the
// reference's non-unix text).
var errSnapshotUnsupported = jsonwire.InvalidParams("shell snapshots are unsupported on this platform")

// captureWaitDelay bounds how long a capture's Wait waits for its stdout after the
// shell exited or was killed (a background job of a startup file may hold it).
const captureWaitDelay = time.Second

// snapshotApplied is a start with its snapshot applied.
type snapshotApplied struct {
	params *protocol.ProcessStartParams // a copy with the rewritten argv
	env    map[string]string
	extra  []*os.File // the state descriptor at shellsnap.StateFD; close after spawn
}

// applyShellSnapshot returns the start to perform: nil when req is nil or does not
// apply (run params as given). Errors are the reference's -32602 checks only.
func (m *Manager) applyShellSnapshot(ctx context.Context, req *shellsnap.Request, params *protocol.ProcessStartParams,
	pol *policy.Policy, cwd string, env map[string]string) (*snapshotApplied, error) {
	if req == nil {
		return nil, nil
	}
	if m.opts.ShellSnapshots == nil {
		return nil, errSnapshotUnsupported
	}
	kind, apply, err := req.Plan(params.Argv)
	if err != nil || !apply {
		return nil, err
	}
	key := shellsnap.Key(req, cwd, params.EnvPolicy, params.Sandbox)
	snap, err := m.opts.ShellSnapshots.Get(ctx, key, func(cctx context.Context) (*shellsnap.Snapshot, error) {
		return m.captureSnapshot(cctx, kind, params, pol, cwd, env)
	})
	if err != nil || snap == nil {
		if err != nil {
			m.log.Debug("shell snapshot unavailable", "process_id", params.ProcessID, "error", err)
		}
		return nil, nil // fall back: run unsnapshotted
	}
	sandboxed := sandboxRequested(params)
	rw := shellsnap.Rewrite(params.Argv, snap, !sandboxed)
	p2 := *params
	p2.Argv = rw.Argv
	out := &snapshotApplied{params: &p2, env: snapshotEnv(env, snap.Env, params.Env, params.EnvPolicy)}
	for k, v := range rw.ChunkEnv {
		out.env[k] = v
	}
	if rw.StateFile != "" {
		f, err := memFile("codex-shell-snapshot", rw.StateFile)
		if err != nil {
			m.log.Debug("shell snapshot state file", "process_id", params.ProcessID, "error", err)
			return nil, nil
		}
		out.extra = make([]*os.File, shellsnap.StateFD-3+1)
		out.extra[shellsnap.StateFD-3] = f
	}
	return out, nil
}

// close releases the parent's copy of the state descriptor.
func (a *snapshotApplied) close() {
	if a == nil {
		return
	}
	for _, f := range a.extra {
		if f != nil {
			_ = f.Close()
		}
	}
}

// snapshotEnv composes the final environment (§3.2): the prepared environment, the
// snapshot's exports (through envPolicy with inherit forced to all), then every key of
// the request env; the always-removed variables go last, as in childEnv.
func snapshotEnv(prepared, exports, reqEnv map[string]string, policy *protocol.ExecEnvPolicy) map[string]string {
	filtered := exports
	if policy != nil {
		p := *policy
		p.Inherit = protocol.EnvInheritAll
		filtered = childEnv(nil, &p, func() []string {
			kv := make([]string, 0, len(exports))
			for k, v := range exports {
				kv = append(kv, k+"="+v)
			}
			return kv
		})
	}
	out := make(map[string]string, len(prepared)+len(filtered))
	for k, v := range prepared {
		out[k] = v
	}
	for k, v := range filtered {
		out[k] = v
	}
	for k, v := range reqEnv {
		out[k] = v
	}
	return childEnv(out, nil, nil)
}

// captureSnapshot runs one capture (§3.2) and parses its stdout. ctx carries the
// capture timeout and the session's end; either kills the capture's process group.
func (m *Manager) captureSnapshot(ctx context.Context, kind shellsnap.Kind, params *protocol.ProcessStartParams,
	pol *policy.Policy, cwd string, env map[string]string) (*shellsnap.Snapshot, error) {
	p2 := *params
	p2.Argv = shellsnap.CaptureArgv(params.Argv, kind)
	var cmd *exec.Cmd
	wrapped, err := m.wrapSandbox(&p2, pol, cwd, env, nil)
	if err != nil {
		return nil, fmt.Errorf("wrapping capture: %w", err)
	}
	if wrapped != nil {
		cmd = exec.CommandContext(ctx, wrapped.Path)
		cmd.Args, cmd.Env, cmd.Dir = wrapped.Args, wrapped.Env, wrapped.Dir
	} else {
		program, err := lookPipeProgram(p2.Argv[0], cwd, env)
		if err != nil {
			return nil, fmt.Errorf("resolving capture shell: %w", err)
		}
		args := p2.Argv
		if params.Arg0 != nil {
			args = append([]string{*params.Arg0}, args[1:]...)
		}
		cmd = exec.CommandContext(ctx, program)
		cmd.Args, cmd.Env, cmd.Dir = args, envList(env), cwd
	}
	var out limitedBuffer
	out.max = shellsnap.MaxCaptureOutput
	cmd.Stdout = &out // stdin and stderr nil: /dev/null
	cmd.SysProcAttr = captureSysProcAttr()
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = captureWaitDelay
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting capture: %w", err)
	}
	err = cmd.Wait()
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // background jobs of the startup files
	if err != nil {
		return nil, fmt.Errorf("running capture: %w", err)
	}
	return shellsnap.Parse(kind, out.buf.Bytes())
}

// errCaptureTooBig fails a capture whose stdout exceeds shellsnap.MaxCaptureOutput.
var errCaptureTooBig = errors.New("capture output exceeds its budget")

// limitedBuffer collects up to max bytes and fails the write beyond (the copying
// goroutine of os/exec then stops and the shell gets EPIPE).
type limitedBuffer struct {
	buf bytes.Buffer
	max int
}

func (b *limitedBuffer) Write(p []byte) (int, error) {
	if b.buf.Len()+len(p) > b.max {
		return 0, errCaptureTooBig
	}
	return b.buf.Write(p)
}
