package sandbox

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/execlab/executor/jsonwire"
	"github.com/execlab/executor/sandbox/policy"
)

// Launcher turns a resolved policy and a command into the command line that runs it
// under the sandbox (spec/sandbox.md §3.1): "/proc/self/exe" with argv[0]
// "codex-linux-sandbox" and the stage flags. The launcher stage then execs the command
// (plain plans), execs or supervises bwrap, or applies the degraded Landlock backend.
//
// A Launcher is immutable and safe for concurrent use. It starts nothing itself.
type Launcher struct {
	report     Report
	exe        string
	inheritPID bool // Options.InheritPIDNamespace
}

// Options configure NewLauncher. Nil means defaults; never mutated.
type Options struct {
	// Executable is the canonical path of this binary, re-entered inside bwrap as the
	// inner stage and granted read access. Default: os.Executable, symlinks resolved.
	Executable string
	// InheritPIDNamespace runs bubblewrap without --unshare-pid (and --as-pid-1): the
	// sandboxed command shares the executor's PID namespace and can signal other
	// same-UID processes (the reference's --linux-sandbox-pid-namespace inherit). Default
	// false: a new PID namespace (isolate).
	InheritPIDNamespace bool
}

// NewLauncher returns a Launcher for a probe result (see Probe).
func NewLauncher(r Report, opts *Options) *Launcher {
	l := &Launcher{report: r}
	if opts != nil {
		l.exe, l.inheritPID = opts.Executable, opts.InheritPIDNamespace
	}
	if l.exe == "" {
		if exe, err := os.Executable(); err == nil {
			if c, err := filepath.EvalSymlinks(exe); err == nil {
				exe = c
			}
			l.exe = exe
		}
	}
	return l
}

// Report returns the probe result the launcher was built with.
func (l *Launcher) Report() Report { return l.report }

// Executable returns the canonical executor path (a runtime read grant; pass it in
// policy.ResolveOptions.RuntimeReadGrants or let Wrap add it).
func (l *Launcher) Executable() string { return l.exe }

// Request is one command to launch. Fields are read only.
type Request struct {
	// Policy is the resolved sandbox intent; nil means no sandbox field.
	Policy *policy.Policy
	// EnforceManagedNetwork is process/start's enforceManagedNetwork.
	EnforceManagedNetwork bool
	// ManagedNetwork is process/start's managedNetwork; nil means absent (all
	// defaults). Used only with EnforceManagedNetwork.
	ManagedNetwork *ManagedNetwork
	// Argv is the command; Argv[0] is looked up on the PATH of Env by the stage.
	Argv []string
	// Arg0, if non-nil, is the argv[0] the command sees.
	Arg0 *string
	// Cwd is the native absolute command cwd (may be a symlink alias).
	Cwd string
	// Env is the command environment. The command gets it unchanged, inside the
	// sandbox; nothing before the sandbox runs with it (env.go).
	Env []string
}

// Command is what to spawn. Spawn it with exec.Cmd{Path: c.Path, Args: c.Args,
// Env: c.Env, Dir: c.Dir} (set Path directly; do not LookPath it), with the caller's
// PTY/pipes and Setsid as for an unsandboxed command.
type Command struct {
	Path string
	Args []string
	// Env is the launcher's fixed environment, which carries Request.Env encoded for
	// the command (env.go); spawn with exactly this, adding nothing.
	Env         []string
	Dir         string
	SandboxType string // always SandboxTypeLinuxSeccomp
	// Backend is the plan actually used: "plain", "bubblewrap" or "landlock".
	Backend string
}

// Wrap returns the sandboxed command for req, or (nil, nil) when req carries no
// sandbox intent (Policy nil and no managed network): spawn directly, sandboxType
// "none". Errors are *policy.Error with the wire code: -32602 "sandbox intent cannot
// be enforced on this executor: <reason>" when no backend can express the plan,
// -32603 "sandbox runtime paths are not configured" when the executor binary is gone.
func (l *Launcher) Wrap(req *Request) (*Command, error) {
	p := req.Policy
	if p == nil && !req.EnforceManagedNetwork {
		return nil, nil
	}
	if len(req.Argv) == 0 {
		return nil, &policy.Error{Code: jsonwire.CodeInvalidParams, Message: msgNoCommand}
	}
	if p == nil { // deviation: managed network without a sandbox is a disabled profile
		p = &policy.Policy{Type: policy.ProfileDisabled, Network: policy.NetworkEnabled, Cwd: cleanCwd(req.Cwd)}
	}
	plan := p.Plan(req.EnforceManagedNetwork)
	if _, err := os.Stat(l.exe); l.exe == "" || err != nil {
		return nil, &policy.Error{Code: jsonwire.CodeInternal, Message: msgRuntimeUnavailable}
	}
	p = withReadGrant(p, l.exe)

	a := &stageArgs{policyCwd: p.Cwd, commandCwd: req.Cwd, haveProfile: true,
		legacyLandlock: p.UseLegacyLandlock, command: req.Argv}
	if req.Arg0 != nil {
		a.arg0, a.haveArg0 = *req.Arg0, true
	}
	if plan.Managed { // bubblewrap only: the landlock case below refuses it
		a.managed = &ManagedNetwork{}
		if req.ManagedNetwork != nil {
			a.managed = req.ManagedNetwork
		}
	}
	switch {
	case plan.Seccomp != policy.SeccompNone && !l.report.Seccomp:
		return nil, unenforceable("seccomp is unavailable")
	case !plan.Isolated:
		a.backend = "plain"
	case l.report.Backend == BackendBubblewrap:
		if !bwrapAllowedFor(l.report.Bubblewrap.Path, p, req.Cwd) {
			return nil, unenforceable(msgNoBwrap)
		}
		a.backend = BackendBubblewrap
		a.bwrap = l.report.Bubblewrap.Path
		a.bwrapFeatures = l.report.Bubblewrap.Features
		a.noProc = !l.report.ProcMount
		a.inheritPID = l.inheritPID
	case l.report.Backend == BackendLandlock:
		if r := landlockRefusal(p, plan.Managed); r != "" {
			return nil, unenforceable("degraded Landlock backend cannot express " + r)
		}
		a.backend = BackendLandlock
	default:
		reason := l.report.unavailable
		if reason == "" {
			reason = msgNoBwrap
		}
		return nil, unenforceable(reason)
	}
	enc, err := p.Encode()
	if err != nil {
		return nil, &policy.Error{Code: jsonwire.CodeInternal, Message: err.Error()}
	}
	a.profile = enc
	env := stageEnv(req.Env)
	if argv := l.directBwrap(a, p, plan, req.Env); argv != nil {
		return &Command{
			Path:        a.bwrap,
			Args:        argv,
			Env:         env,
			Dir:         req.Cwd,
			SandboxType: SandboxTypeLinuxSeccomp,
			Backend:     a.backend,
		}, nil
	}
	return &Command{
		Path:        "/proc/self/exe",
		Args:        append([]string{StageArgv0}, a.encode()...),
		Env:         env,
		Dir:         req.Cwd,
		SandboxType: SandboxTypeLinuxSeccomp,
		Backend:     a.backend,
	}, nil
}

func unenforceable(reason string) error {
	return &policy.Error{Code: jsonwire.CodeInvalidParams, Message: msgUnenforceable + reason, Kind: jsonwire.KindSandboxUnavailable}
}

func cleanCwd(c string) string {
	if !strings.HasPrefix(c, "/") {
		return "/"
	}
	return filepath.Clean(c)
}

// withReadGrant returns p with a read entry for f unless f is already readable.
func withReadGrant(p *policy.Policy, f string) *policy.Policy {
	if !p.Restricted {
		return p
	}
	if a := p.Access(f); a == policy.AccessRead || a == policy.AccessWrite {
		return p
	}
	q := *p
	q.Entries = append(append([]policy.ResolvedEntry(nil), p.Entries...),
		policy.ResolvedEntry{Path: filepath.Clean(f), Access: policy.AccessRead})
	return &q
}

// bwrapAllowedFor rejects a bwrap under the command cwd or any writable root (§3.5).
func bwrapAllowedFor(bwrap string, p *policy.Policy, cwd string) bool {
	if cwd != "" && cwd != "/" && policy.IsWithin(bwrap, filepath.Clean(cwd)) {
		return false
	}
	if !p.Restricted {
		return true
	}
	for _, e := range p.Entries {
		if e.Access == policy.AccessWrite && e.Path != "/" && policy.IsWithin(bwrap, e.Path) {
			return false
		}
	}
	return true
}
