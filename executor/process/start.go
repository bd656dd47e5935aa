package process

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"syscall"
	"time"

	"github.com/execlab/executor/executor/protocol"
	"github.com/execlab/executor/executor/shellsnap"
	"github.com/execlab/executor/jsonwire"
	"github.com/execlab/executor/sandbox/policy"
)

// Start handles process/start (spec/jsonrpc.md §3.1). Checks run in the reference's
// order, which decides which error wins: managedNetwork decoding (a params error in
// the reference), networkProxy, shellSnapshot decoding, preparation
// (sandbox, cwd, environment), empty argv, the shellSnapshot checks (snapshot.go; a
// capture may run here), the sandbox launch plan (our own -32602
// when no backend can enforce it), duplicate id; then the entry is inserted as
// Starting and the child spawned (through the sandbox launcher when wrapped).
//
// ctx bounds the request only: the child outlives it (process lifetime is the
// Manager's, never the request's).
func (m *Manager) Start(ctx context.Context, params *protocol.ProcessStartParams) (*protocol.ProcessStartResult, error) {
	res, err := m.start(ctx, params)
	if err != nil {
		return nil, withErrorKind(err)
	}
	return res, nil
}

// startPlan is what start decided from the request before anything runs.
type startPlan struct {
	proxy   *proxyLaunch       // nil: no networkProxy
	snapReq *shellsnap.Request // nil: no shellSnapshot
	cwd     string
	pol     *policy.Policy // nil: not sandboxed
	env     map[string]string
}

// admit checks a process/start request in the reference's order (which error wins
// matters on the wire: changes-0.171.0.md, spec/network-proxy.md §2.2,
// capabilities-0.171.0.md §3) and resolves its cwd, sandbox policy and environment.
// Nothing runs and nothing is registered yet.
func (m *Manager) admit(params *protocol.ProcessStartParams) (*startPlan, error) {
	proxy, err := checkNetworkProxy(params) // netproxy.go
	if err != nil {
		return nil, err
	}
	if m.opts.TCPUpstreamProxy != "" && proxy == nil && (present(params.ManagedNetwork) || params.EnforceManagedNetwork) {
		return nil, errMandatoryUpstream
	}
	if err := proxy.supported(m.opts.CredentialCA != nil); err != nil {
		return nil, err // fail closed: never run without the proxy asked for
	}
	snapReq, err := shellsnap.Decode(params.ShellSnapshot)
	if err != nil {
		return nil, err
	}
	cwd, cwdErr := params.Cwd.NativeCwd()
	pol, err := m.prepareSandbox(params, cwd)
	if err != nil {
		return nil, err
	}
	if cwdErr != nil {
		return nil, cwdErr
	}
	env := childEnv(params.Env, params.EnvPolicy, os.Environ)
	if len(params.Argv) == 0 {
		return nil, jsonwire.InvalidParams("argv must not be empty")
	}
	if params.PtySize != nil {
		// Extension (docs/protocol-extensions.md); only our clients send it.
		if err := validatePtySize(params.PtySize); err != nil {
			return nil, err
		}
	}
	return &startPlan{proxy: proxy, snapReq: snapReq, cwd: cwd, pol: pol, env: env}, nil
}

func (m *Manager) start(ctx context.Context, params *protocol.ProcessStartParams) (*protocol.ProcessStartResult, error) {
	plan, err := m.admit(params)
	if err != nil {
		return nil, err
	}
	proxy, snapReq, cwd, pol, env := plan.proxy, plan.snapReq, plan.cwd, plan.pol, plan.env
	// Credential masking looks at the request's launch, not the snapshot's wrapper; a
	// launch that asks for a shell snapshot keeps it and runs unmasked, as 0.171.0 does
	// ("…preserving shell profiles and snapshots…", also for bash -c), and so does one
	// with an arg0 (any, even "bash" or "").
	argv := params.Argv
	if snapReq != nil || params.Arg0 != nil {
		argv = nil
	}
	snap, err := m.applyShellSnapshot(ctx, snapReq, params, pol, cwd, env)
	if err != nil {
		return nil, err
	}
	defer snap.close()
	var extraFiles []*os.File
	if snap != nil {
		params, env, extraFiles = snap.params, snap.env, snap.extra
	}
	// After the snapshot: the proxy's variables overwrite whatever the snapshot's
	// exports or the request set (without a sandbox the proxy is advisory either way).
	px, err := m.startProxy(proxy, argv, params.ProcessID, env) // overwrites the proxy variables in env
	if err != nil {
		return nil, err
	}
	defer px.closeIfOrphaned()
	wrapped, err := m.wrapSandbox(params, pol, cwd, env, px)
	if err != nil {
		return nil, err
	}
	sandboxType := protocol.SandboxTypeNone
	if wrapped != nil {
		sandboxType = wrapped.SandboxType
	}

	id := params.ProcessID
	p := newProc(id, params.Tty, params.PipeStdin, params.OutputAck, &m.opts)
	p.sandboxed = wrapped != nil
	m.mu.Lock()
	if m.closing {
		m.mu.Unlock()
		return nil, jsonwire.Internal("process manager is shut down")
	}
	m.sweepLocked(time.Now())
	if _, exists := m.procs[id]; exists {
		m.mu.Unlock()
		return nil, jsonwire.InvalidRequest("process %s already exists", id)
	}
	m.procs[id] = p
	m.mu.Unlock()

	if testHookSpawning != nil {
		testHookSpawning(id)
	}
	sp, err := spawn(&spawnSpec{
		argv:      params.Argv,
		arg0:      params.Arg0,
		cwd:       cwd,
		env:       env,
		tty:       params.Tty,
		pipeStdin: params.PipeStdin,
		ptySize:   params.PtySize,
		wrapped:   wrapped,

		extraFiles: extraFiles,
	})
	if err != nil {
		m.mu.Lock()
		if m.procs[id] == p {
			delete(m.procs, id)
		}
		m.mu.Unlock()
		m.log.Debug("spawn failed", "process_id", id, "error", err)
		return nil, &spawnError{err: err}
	}

	m.mu.Lock()
	if m.procs[id] != p || m.closing {
		// A terminate removed the Starting entry (or Close began) while spawning.
		m.mu.Unlock()
		_ = syscall.Kill(-sp.proc.Pid, syscall.SIGKILL)
		sp.closeAll()
		_, _ = sp.proc.Wait() // SIGKILLed: returns promptly; never leave a zombie
		return nil, jsonwire.InvalidRequest("process %s start was cancelled", id)
	}
	p.mu.Lock()
	p.starting = false
	p.pgid = sp.proc.Pid
	m.opts.Guard.track(p.pgid)
	p.outputs = sp.outputs
	p.openStreams = len(sp.outputs)
	p.readers = len(sp.outputs)
	if sp.stdin != nil {
		p.stdin = newStdinQueue(sp.stdin)
	}
	p.mu.Unlock()
	// Adding to wg under m.mu while !closing: Close cannot be waiting yet.
	m.wg.Add(1 + len(sp.outputs))
	m.adoptProxy(px, p)
	m.observeStart(ctx, p)
	go m.routineWait(p, sp.proc)
	if params.Tty {
		go m.routineRead(p, sp.outputs[0], protocol.StreamPty)
	} else {
		go m.routineRead(p, sp.outputs[0], protocol.StreamStdout)
		go m.routineRead(p, sp.outputs[1], protocol.StreamStderr)
	}
	if p.ack != nil {
		m.wg.Add(1)
		go m.routineSend(p)
	}
	if p.stdin != nil {
		m.wg.Add(1)
		go func(q *stdinQueue) {
			defer m.wg.Done()
			q.run()
		}(p.stdin)
	}
	m.mu.Unlock()
	m.log.Debug("process started", "process_id", id, "pid", sp.proc.Pid, "tty", params.Tty, "sandbox_type", sandboxType)
	return &protocol.ProcessStartResult{ProcessID: id, SandboxType: sandboxType}, nil
}

// testHookSpawning, when set by tests, runs while the entry is Starting, before spawn.
var testHookSpawning func(id string)

// present reports whether an optional raw member was given with a non-null value.
func present(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) > 0 && !bytes.Equal(t, []byte("null"))
}

// observeStart reports p's spawn to the Observer, and starts its span when the Observer
// implements Span (before routineWait runs: it alone calls p.endSpan).
func (m *Manager) observeStart(ctx context.Context, p *proc) {
	m.opts.Observer.ProcessStarted()
	if tr, ok := m.opts.Observer.(Span); ok {
		p.endSpan = tr.StartProcess(ctx)
	}
}
