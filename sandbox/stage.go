package sandbox

// Stage CLI (spec/sandbox.md §3.2). Both the launcher stage (host namespaces) and the
// inner stage (inside bwrap, --apply-seccomp-then-exec) are this binary re-entered.

import (
	"fmt"
	"path/filepath"
	"strings"
)

// stageArgs are the parsed hidden flags.
type stageArgs struct {
	policyCwd, commandCwd string
	profile               string
	haveProfile           bool
	legacyLandlock        bool
	inner                 bool
	backend               string // plain | bubblewrap | landlock (launcher only)
	bwrap                 string
	bwrapFeatures         []string
	arg0                  string
	haveArg0              bool
	noProc                bool
	inheritPID            bool // bwrap without --unshare-pid (Options.InheritPIDNamespace)
	// managed is --managed-network (nil = no managed network); routeSpec is
	// --proxy-route-spec (inner stage only, decoded there).
	managed   *ManagedNetwork
	routeSpec string
	command   []string
}

// MaybeRunStage dispatches the hidden sandbox stages. main must call it first, before
// any other initialization, with os.Args:
//
//	if handled, code := sandbox.MaybeRunStage(os.Args); handled { os.Exit(code) }
//
// It handles basename(argv[0]) == "codex-linux-sandbox" (an optional leading
// --codex-linux-sandbox is stripped) and argv[1] == "--codex-linux-sandbox". It does
// NOT handle --codex-run-as-fs-helper: the fs helper's operations belong to
// executor/fs. When handled is true the stage has run (or, for plain plans, exec'd the
// command and never returned) and exitCode is the process exit code.
func MaybeRunStage(args []string) (handled bool, exitCode int) {
	return MaybeRunStageWith(args, nil)
}

// StageOptions extend the stages with in-process commands. Nil means none.
type StageOptions struct {
	// InProcess maps a flag F to a function the inner stage runs itself, instead of
	// starting a child, when the sandboxed command is exactly [<this executable>, F]
	// (same file as /proc/self/exe). The function runs after the same checks and
	// confinement the child would get (zero capabilities, no_new_privs, the plan's
	// seccomp filter, here synchronized to every thread of the stage) with the
	// command's stdio, cwd and environment, and returns the exit code. It saves one
	// start of this binary per call; the fs helper (FSHelperFlag) is the user.
	InProcess map[string]func() int
}

// MaybeRunStageWith is MaybeRunStage with options (see StageOptions).
func MaybeRunStageWith(args []string, opts *StageOptions) (handled bool, exitCode int) {
	var rest []string
	switch {
	case len(args) > 0 && filepath.Base(args[0]) == StageArgv0:
		rest = args[1:]
		if len(rest) > 0 && rest[0] == StageFlag {
			rest = rest[1:]
		}
	case len(args) > 1 && args[1] == StageFlag:
		rest = args[2:]
	default:
		return false, 0
	}
	return true, runStage(rest, opts)
}

func parseStageArgs(args []string) (*stageArgs, error) {
	a := &stageArgs{}
	for i := 0; i < len(args); i++ {
		flag := args[i]
		if flag == "--" {
			a.command = args[i+1:]
			return a, nil
		}
		value := func() (string, error) {
			if i+1 >= len(args) {
				return "", fmt.Errorf("flag %s needs a value", flag)
			}
			i++
			return args[i], nil
		}
		var err error
		switch flag {
		case "--sandbox-policy-cwd":
			a.policyCwd, err = value()
		case "--command-cwd":
			a.commandCwd, err = value()
		case "--permission-profile":
			a.profile, err = value()
			a.haveProfile = true
		case "--use-legacy-landlock":
			a.legacyLandlock = true
		case "--apply-seccomp-then-exec":
			a.inner = true
		case "--backend":
			a.backend, err = value()
		case "--bwrap":
			a.bwrap, err = value()
		case "--bwrap-features":
			var v string
			v, err = value()
			if v != "" {
				a.bwrapFeatures = strings.Split(v, ",")
			}
		case "--arg0":
			a.arg0, err = value()
			a.haveArg0 = true
		case "--no-proc":
			a.noProc = true
		case "--inherit-pid-namespace":
			a.inheritPID = true
		case "--managed-network":
			var v string
			if v, err = value(); err == nil {
				a.managed, err = decodeManagedNetwork(v)
			}
		case "--proxy-route-spec":
			a.routeSpec, err = value()
		default:
			return nil, fmt.Errorf("unknown sandbox flag %q", flag)
		}
		if err != nil {
			return nil, err
		}
	}
	return a, nil
}

// encode renders the stage flags, the inverse of parseStageArgs.
func (a *stageArgs) encode() []string {
	var out []string
	add := func(s ...string) { out = append(out, s...) }
	if a.policyCwd != "" {
		add("--sandbox-policy-cwd", a.policyCwd)
	}
	if a.commandCwd != "" {
		add("--command-cwd", a.commandCwd)
	}
	if a.haveProfile {
		add("--permission-profile", a.profile)
	}
	if a.legacyLandlock {
		add("--use-legacy-landlock")
	}
	if a.backend != "" {
		add("--backend", a.backend)
	}
	if a.bwrap != "" {
		add("--bwrap", a.bwrap)
	}
	if len(a.bwrapFeatures) > 0 {
		add("--bwrap-features", strings.Join(a.bwrapFeatures, ","))
	}
	if a.haveArg0 {
		add("--arg0", a.arg0)
	}
	if a.noProc {
		add("--no-proc")
	}
	if a.inheritPID {
		add("--inherit-pid-namespace")
	}
	if a.managed != nil {
		add("--managed-network", encodeManagedNetwork(a.managed))
	}
	if a.routeSpec != "" {
		add("--proxy-route-spec", a.routeSpec)
	}
	if a.inner {
		add("--apply-seccomp-then-exec")
	}
	add("--")
	return append(out, a.command...)
}

func (a *stageArgs) hasFeature(f string) bool {
	for _, x := range a.bwrapFeatures {
		if x == f {
			return true
		}
	}
	return false
}
