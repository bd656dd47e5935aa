package sandbox

// Stage CLI (spec/sandbox.md §3.2). Both the launcher stage (host namespaces) and the
// inner stage (inside bwrap, --apply-seccomp-then-exec) are this binary re-entered.

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/execlab/executor/internal/reexec"
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
	// transparentSetup (--transparent-tcp-setup, inner stage, started by bwrap with
	// the setup's capabilities) sets the capture up and re-executes the stage with
	// transparentFDs (--transparent-tcp-fds TUN,DNS) and none of them.
	transparentSetup bool
	transparentFDs   []int
	command          []string
}

// The stages are a re-entry point of internal/reexec: main (and every TestMain whose
// binary is re-entered) calls reexec.Main (reexec.TestMain) first, before any other
// initialization, and this init registers the stages there. They are selected by
// basename(argv[0]) == StageArgv0 (an optional leading StageFlag is stripped) or by
// argv[1] == StageFlag; --codex-run-as-fs-helper is executor/fs's point, not ours. A
// selected stage runs (or, for plain plans, execs the command and never returns) and
// its result is the process exit code.
func init() {
	reexec.Register(reexec.Point{Args: []string{StageFlag}, Argv0: StageArgv0, Run: runStage})
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
		case "--transparent-tcp-setup":
			a.transparentSetup = true
		case "--transparent-tcp-fds":
			a.transparentFDs, err = parseFDs(value())
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
	if a.transparentSetup {
		add("--transparent-tcp-setup")
	}
	if len(a.transparentFDs) > 0 {
		fds := make([]string, len(a.transparentFDs))
		for i, fd := range a.transparentFDs {
			fds[i] = strconv.Itoa(fd)
		}
		add("--transparent-tcp-fds", strings.Join(fds, ","))
	}
	if a.inner {
		add("--apply-seccomp-then-exec")
	}
	add("--")
	return append(out, a.command...)
}

// parseFDs parses the value (v, err) of --transparent-tcp-fds: two descriptor numbers
// above stderr.
func parseFDs(v string, err error) ([]int, error) {
	if err != nil {
		return nil, err
	}
	parts := strings.Split(v, ",")
	if len(parts) != 2 {
		return nil, fmt.Errorf("bad --transparent-tcp-fds %q", v)
	}
	fds := make([]int, len(parts))
	for i, s := range parts {
		n, err := strconv.Atoi(s)
		if err != nil || n <= 2 {
			return nil, fmt.Errorf("bad --transparent-tcp-fds %q", v)
		}
		fds[i] = n
	}
	return fds, nil
}

func (a *stageArgs) hasFeature(f string) bool {
	for _, x := range a.bwrapFeatures {
		if x == f {
			return true
		}
	}
	return false
}
