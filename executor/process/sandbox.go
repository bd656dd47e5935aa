package process

// Sandbox integration of process/start (spec/sandbox.md §2.9, §5; spec/jsonrpc.md §3.1).
//
// Flow: prepareSandbox decodes managedNetwork (its serde texts) and resolves the request's FileSystemSandboxContext into a policy
// (decode errors were already reported by the params decoder); wrapSandbox asks the
// Launcher for the wrapped command line (/proc/self/exe as "codex-linux-sandbox" with
// the stage flags), which spawn then starts directly, without any PATH lookup. On exit,
// a sandboxed process's output is classified by sandbox.Denied (the sandboxDenied
// heuristic) after a short grace period for trailing output.

import (
	"encoding/json"
	"errors"
	"time"

	"github.com/execlab/executor/executor/protocol"
	"github.com/execlab/executor/jsonwire"
	"github.com/execlab/executor/sandbox"
	"github.com/execlab/executor/sandbox/policy"
)

// errNoLauncher is returned for sandbox intent when the Manager was built without a
// Launcher: never run a command less confined than asked.
var errNoLauncher = jsonwire.InvalidParams("sandbox intent cannot be enforced on this executor: sandbox support is not configured").
	WithKind(jsonwire.KindSandboxUnavailable)

// sandboxRequested reports whether params carry sandbox intent: a sandbox context, or
// enforceManagedNetwork (which the executor treats as a disabled profile under managed
// network, a deviation in the stricter direction, spec/sandbox.md §2.9).
func sandboxRequested(params *protocol.ProcessStartParams) bool {
	return params.Sandbox != nil || params.EnforceManagedNetwork
}

// prepareSandbox resolves the sandbox context of a process/start (spec/sandbox.md
// §2.1). cwd is the native command cwd ("" when it did not convert: the cwd error is
// reported after sandbox errors, in the reference's order). A nil policy with a nil
// error means "no sandbox context".
func (m *Manager) prepareSandbox(params *protocol.ProcessStartParams, cwd string) (*policy.Policy, error) {
	if !sandboxRequested(params) {
		return nil, nil
	}
	if m.opts.Sandbox == nil {
		return nil, errNoLauncher
	}
	if params.Sandbox == nil {
		return nil, nil // managed network only: the launcher builds the disabled profile
	}
	p, err := policy.Resolve(params.Sandbox, &policy.ResolveOptions{
		Purpose:           policy.ForProcess,
		CommandCwd:        cwd,
		Home:              m.opts.Home,
		TmpDir:            params.Env["TMPDIR"], // the launcher environment is the request env
		RuntimeReadGrants: append([]string{m.opts.Sandbox.Executable()}, m.opts.RuntimeReadGrants...),
	})
	if err != nil {
		return nil, wireError(err)
	}
	return p, nil
}

// wrapSandbox returns the launcher command for a sandboxed start, or nil when the
// request carries no sandbox intent (spawn directly, sandboxType "none").
//
// With an executor-local proxy (px non-nil) and enforceManagedNetwork, the managed
// network is derived from the proxy's own listeners (spec/network-proxy.md §8.1): the
// client's loopbackPorts are replaced by the proxy's ports, so the bridge carries the
// child's proxy variables (already pointing at the proxy) into the namespace.
func (m *Manager) wrapSandbox(params *protocol.ProcessStartParams, p *policy.Policy, cwd string, env map[string]string, px *proxyHandle) (*sandbox.Command, error) {
	if !sandboxRequested(params) {
		return nil, nil
	}
	mn, err := decodeManagedNetwork(params.ManagedNetwork, px.transparentTCP())
	if err != nil {
		return nil, err
	}
	// Transparent TCP implies the managed network: codex 0.171.0 captures (and bridges)
	// with proxy.transparentTcp even without enforceManagedNetwork (probed).
	enforce := params.EnforceManagedNetwork || px.transparentTCP()
	forced := m.opts.TransparentTCP && params.EnforceManagedNetwork
	switch {
	case px != nil && enforce:
		mn = px.managedNetwork(mn)
		mn.TransparentTcp = mn.TransparentTcp || forced
	case forced:
		// No executor-local proxy to capture into: no client proxy port lies inside
		// the managed context (port 0 is never a proxy port), so the launch fails
		// closed as codex 0.171.0's does.
		c := sandbox.ManagedNetwork{}
		if mn != nil {
			c = *mn
		}
		c.LoopbackPorts = []uint16{0}
		mn = &c
	}
	cmd, err := m.opts.Sandbox.Wrap(&sandbox.Request{
		Policy:                p,
		EnforceManagedNetwork: enforce,
		ManagedNetwork:        mn,
		Argv:                  params.Argv,
		Arg0:                  params.Arg0,
		Cwd:                   cwd,
		Env:                   envList(env),
	})
	if err != nil {
		return nil, wireError(err)
	}
	if cmd != nil && p != nil {
		m.log.Debug("sandboxed start", "process_id", params.ProcessID, "backend", cmd.Backend,
			"requires_platform_sandbox", p.RequiresPlatformSandbox(enforce))
	}
	return cmd, nil
}

// errTransparentTCP is codex 0.171.0's answer to managedNetwork.transparentTcp: true
// on an executor without a local managed proxy (observed; no error.data).
var errTransparentTCP = jsonwire.InvalidParams("transparent TCP requires an executor-local managed proxy")

// errMandatoryUpstream is codex 0.171.0's answer, when started with
// --tcp-upstream-proxy, to any managed-network start without a networkProxy (observed;
// no error.data).
var errMandatoryUpstream = jsonwire.InvalidParams("a mandatory TCP upstream requires an executor-local managed proxy")

// managedNetworkParams is the wire shape of process/start's managedNetwork
// (spec/sandbox.md §1.1): every field optional (#[serde(default)]), unknown fields
// ignored.
type managedNetworkParams struct {
	// TransparentTcp (codex 0.171.0, first in declaration order, so the sequence form
	// shifts: `[[80]]` now fails) asks for TCP routed through an executor-local SOCKS
	// proxy, which this executor does not have: true is refused.
	TransparentTcp                 bool     `json:"transparentTcp,omitempty"`
	LoopbackPorts                  []uint16 `json:"loopbackPorts,omitempty"`
	AllowLocalBinding              bool     `json:"allowLocalBinding,omitempty"`
	AllowUnixSockets               []string `json:"allowUnixSockets,omitempty"`
	DangerouslyAllowAllUnixSockets bool     `json:"dangerouslyAllowAllUnixSockets,omitempty"`
}

// RustName is the reference's type name, as in `invalid type: string "x", expected
// struct ManagedNetworkSandboxContext` (observed from codex 0.169.0).
func (managedNetworkParams) RustName() string { return "ManagedNetworkSandboxContext" }

// decodeManagedNetwork decodes the raw managedNetwork member with the reference's serde
// texts (-32602). Absent or null is nil (all defaults). It is checked on every start,
// sandboxed or not, as the reference's params decoder does. transparentTcp: true is
// refused unless the launch's proxy does transparent TCP (spec/network-proxy.md §2.2
// step 2), which then sets it in the managed network itself (proxyHandle.managedNetwork).
func decodeManagedNetwork(raw json.RawMessage, proxyTransparent bool) (*sandbox.ManagedNetwork, error) {
	if !present(raw) {
		return nil, nil
	}
	var p managedNetworkParams
	if err := jsonwire.UnmarshalParams(raw, &p); err != nil {
		return nil, err
	}
	if p.TransparentTcp && !proxyTransparent {
		return nil, errTransparentTCP
	}
	return &sandbox.ManagedNetwork{LoopbackPorts: p.LoopbackPorts, AllowLocalBinding: p.AllowLocalBinding,
		AllowUnixSockets: p.AllowUnixSockets, DangerouslyAllowAllUnixSockets: p.DangerouslyAllowAllUnixSockets}, nil
}

// wireError turns a *policy.Error into the JSON-RPC error with the same code and text.
func wireError(err error) error {
	var pe *policy.Error
	if errors.As(err, &pe) {
		e := &jsonwire.Error{Code: pe.Code, Message: pe.Message}
		if pe.Kind != "" {
			e = e.WithKind(pe.Kind)
		}
		return e
	}
	return jsonwire.Internal("%s", err.Error())
}

// classifyExit decides sandboxDenied for a sandboxed process that exited with code
// (spec/sandbox.md §5): it waits up to deniedGrace for the output streams to reach
// EOF, so trailing output counts, then runs the heuristic over the retained stdout
// (pipes' stdout plus pty), stderr and aggregated output. Unsandboxed processes and
// exit code 0 are never denied and do not wait.
func (m *Manager) classifyExit(p *proc, code int32) bool {
	if !p.sandboxed || code == 0 {
		return false
	}
	t := time.NewTimer(deniedGrace)
	defer t.Stop()
wait:
	for {
		p.mu.Lock()
		if p.openStreams == 0 {
			p.mu.Unlock()
			break
		}
		wake := p.waitChanLocked()
		p.mu.Unlock()
		select {
		case <-wake:
		case <-t.C:
			break wait
		}
	}
	p.mu.Lock()
	stdout, stderr, all := p.out.texts()
	p.mu.Unlock()
	denied, reason := sandbox.Denied(true, int(code), stdout, stderr, all)
	if denied {
		m.log.Debug("sandbox denial suspected", "process_id", p.id, "exit_code", code, "reason", reason)
	}
	return denied
}
