package sandbox

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/execlab/executor/internal/reexec"
	"github.com/execlab/executor/sandbox/policy"
)

// errConfining marks a spawn-thread failure before the command was started (seccomp,
// capabilities), as opposed to a failure to execute the command itself.
var errConfining = errors.New("confining the command")

// forwardedSignals are relayed from a supervising stage to its child (§3.7, §3.8).
var forwardedSignals = []os.Signal{unix.SIGHUP, unix.SIGINT, unix.SIGQUIT, unix.SIGTERM}

// stageFail prints msg as the stage's one-line diagnostic and returns code. The stage
// is a separate process whose stderr is the command's stderr; this is the user-visible
// output the reference produces too.
func stageFail(code int, msg string) int {
	if code == exitPanic {
		msg = panicPrefix + msg
	}
	fmt.Fprintln(os.Stderr, msg)
	return code
}

func runStage(args []string) int {
	a, err := parseStageArgs(args)
	if err != nil {
		return stageFail(exitBuildFailure, err.Error())
	}
	if a.legacyLandlock && a.inner {
		return stageFail(exitBuildFailure, "--use-legacy-landlock cannot be combined with --apply-seccomp-then-exec")
	}
	if !a.haveProfile {
		return stageFail(exitBuildFailure, msgMissingProfile)
	}
	if len(a.command) == 0 {
		return stageFail(exitBuildFailure, msgNoCommand)
	}
	p, err := policy.DecodePolicy(a.profile)
	if err != nil {
		return stageFail(exitBuildFailure, err.Error())
	}
	// The command environment travels encoded (env.go); a stage whose own environment
	// still holds what the loader or libc honours was not started by a sanitizing
	// launcher, and launches nothing.
	own := os.Environ()
	if _, encoded := commandEnv(own); encoded {
		if name := preStageHazard(own); name != "" {
			return stageFail(exitBuildFailure, msgEnvHazard+name)
		}
	}
	if a.inner && a.transparentSetup {
		return runTransparentSetup(a)
	}
	if a.inner {
		env := innerCommandEnv(own)
		if fn := inProcessCommand(a); fn != nil {
			return runInProcess(p, env, fn)
		}
		return runInner(a, p, env)
	}
	env, _ := commandEnv(own)
	if a.legacyLandlock && !p.FullWrite() {
		return stageFail(exitPanic, msgLegacyLandlock)
	}
	plan := p.Plan(a.managed != nil)
	if plan.Managed && a.backend != BackendBubblewrap {
		return stageFail(exitBuildFailure, msgUnenforceable+"managed network requires bubblewrap")
	}
	switch a.backend {
	case "plain", "":
		return runPlain(a, plan.Seccomp, env)
	case "bubblewrap":
		return runBubblewrap(a, p, plan, env)
	case "landlock":
		return runLandlock(a, p, plan, env)
	}
	return stageFail(exitBuildFailure, fmt.Sprintf("unknown sandbox backend %q", a.backend))
}

// resolveCommand finds argv[0] on the PATH of env (the command environment) and
// applies arg0. A failure is reported with execFailed. The stage's own PATH becomes the
// command's (PATH is no loader variable): exec.LookPath reads nothing else.
func resolveCommand(a *stageArgs, env []string) (string, []string, error) {
	if path, ok := lookupEnv(env, "PATH"); ok {
		os.Setenv("PATH", path)
	} else {
		os.Unsetenv("PATH")
	}
	bin, err := exec.LookPath(a.command[0])
	if err != nil && !errors.Is(err, exec.ErrDot) {
		return "", nil, err
	}
	argv := append([]string(nil), a.command...)
	if a.haveArg0 {
		argv[0] = a.arg0
	}
	return bin, argv, nil
}

// execFailed reports that the command could not be executed, as the reference does:
// exit 101 with "Failed to execvp <argv0>: <text> (os error <n>)" (exec_error.go).
func execFailed(a *stageArgs, err error) int {
	return stageFail(exitPanic, execvpMessage(a.command[0], err))
}

// runPlain is §3.4 rows 1 and 3: NNP + seccomp (if any) on this locked thread, then
// execve of the command with env. Never returns on success.
func runPlain(a *stageArgs, mode policy.SeccompMode, env []string) int {
	runtime.LockOSThread() // never unlocked: the thread is confined and then replaced by execve
	bin, argv, err := resolveCommand(a, env)
	if err != nil {
		return execFailed(a, err)
	}
	if mode != policy.SeccompNone {
		if err := installSeccomp(mode, SeccompOptions{}); err != nil {
			return stageFail(exitBuildFailure, err.Error())
		}
	}
	err = unix.Exec(bin, argv, env)
	return execFailed(a, err)
}

// runInner is the inner stage (§3.8): check capabilities, then start the command with
// env on a locked, confined thread and reap as pid 1.
func runInner(a *stageArgs, p *policy.Policy, env []string) int {
	if held, err := capsRetained(); err != nil || held {
		return stageFail(exitBuildFailure, msgRetainedCaps)
	}
	bin, argv, err := resolveCommand(a, env)
	if err != nil {
		return execFailed(a, err)
	}
	if a.managed != nil { // §3.8 step 3: bridges run on unconfined threads
		ip, routed, err := startInnerProxy(a.routeSpec, env, a.transparentFDs)
		if err != nil {
			return stageFail(exitPanic, msgProxyInnerPrefix+err.Error())
		}
		defer ip.close()
		env = routed
	}
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, forwardedSignals...)
	type started struct {
		pid int
		err error
	}
	ch := make(chan started, 1)
	mode := p.Plan(a.managed != nil).Seccomp
	opts := SeccompOptions{AllowUnixSockets: a.managed != nil && a.managed.DangerouslyAllowAllUnixSockets}
	// The spawn goroutine locks its thread and never unlocks it: when it returns, the
	// runtime terminates the confined thread. Other threads stay unfiltered.
	go func() {
		runtime.LockOSThread()
		if err := installSeccomp(mode, opts); err != nil {
			ch <- started{err: fmt.Errorf("%w: %w", errConfining, err)}
			return
		}
		proc, err := os.StartProcess(bin, argv, &os.ProcAttr{
			Env:   env,
			Files: []*os.File{os.Stdin, os.Stdout, os.Stderr},
		})
		if err != nil {
			ch <- started{err: err}
			return
		}
		ch <- started{pid: proc.Pid}
		proc.Release()
	}()
	s := <-ch
	if s.err != nil {
		if errors.Is(s.err, errConfining) {
			return stageFail(exitBuildFailure, s.err.Error())
		}
		return execFailed(a, s.err)
	}
	return reapAsInit(s.pid, sigs)
}

// inProcessCommand returns the registered function for a's command when the command
// is this executable with exactly the flag of an in-process re-entry point
// (reexec.Point.InProcess).
func inProcessCommand(a *stageArgs) func() int {
	if len(a.command) != 2 {
		return nil
	}
	fn := reexec.InProcessFunc(a.command[1])
	if fn == nil {
		return nil
	}
	self, err := os.Stat("/proc/self/exe")
	if err != nil {
		return nil
	}
	if target, err := os.Stat(a.command[0]); err != nil || !os.SameFile(self, target) {
		return nil
	}
	return fn
}

// runInProcess is the inner stage for an in-process command: the same capability
// check as runInner, then no_new_privs and the plan's filter on every thread of this
// process (TSYNC), then fn with env as the process environment. Nothing runs
// unconfined after the filter is installed, so unlike runInner there is no unfiltered
// thread to keep.
func runInProcess(p *policy.Policy, env []string, fn func() int) int {
	if held, err := capsRetained(); err != nil || held {
		return stageFail(exitBuildFailure, msgRetainedCaps)
	}
	runtime.LockOSThread() // never unlocked: the stage exits after fn
	if err := installSeccompAllThreads(p.Plan(false).Seccomp, SeccompOptions{}); err != nil {
		return stageFail(exitBuildFailure, err.Error())
	}
	setProcessEnv(env)
	return fn()
}

// setProcessEnv makes env this process's environment (entries without "=" or with an
// empty name, which setenv cannot hold, are dropped). Only for confined code.
func setProcessEnv(env []string) {
	os.Clearenv()
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok && k != "" {
			os.Setenv(k, v)
		}
	}
}

// reapAsInit forwards signals to pid and reaps every child until pid exits; returns
// its exit code or 128+signal (pid 1 cannot re-raise).
func reapAsInit(pid int, sigs chan os.Signal) int {
	done := make(chan struct{})
	defer close(done)
	go func() { // forwarder; exits with the stage
		for {
			select {
			case s := <-sigs:
				unix.Kill(pid, s.(syscall.Signal))
			case <-done:
				return
			}
		}
	}()
	for {
		var ws unix.WaitStatus
		got, err := unix.Wait4(-1, &ws, 0, nil)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return exitBuildFailure
		}
		if got != pid {
			continue
		}
		switch {
		case ws.Exited():
			return ws.ExitStatus()
		case ws.Signaled():
			return 128 + int(ws.Signal())
		}
	}
}

// runBubblewrap builds the bwrap argv and execs or supervises it (§3.6, §3.7). env is
// the command environment: bwrap and the inner stage get it encoded (stageEnv).
func runBubblewrap(a *stageArgs, p *policy.Policy, plan policy.Plan, env []string) int {
	tmpdir, _ := lookupEnv(env, "TMPDIR")
	regDir := registryPathFor(tmpdir)
	if fi, err := os.Lstat(regDir); err == nil && fi.Mode()&os.ModeSymlink != 0 {
		return stageFail(exitPanic, (&errRegistrySymlink{path: regDir}).Error())
	}
	var hp *hostProxy // managed network: supervised, closed after bwrap exits (§3.10)
	if a.managed != nil {
		var err error
		if hp, err = startHostProxy(a.managed, env, tmpdir); err != nil {
			if errors.Is(err, errTransparentNoSOCKS) {
				return stageFail(exitPanic, msgTransparentPrefix+err.Error())
			}
			return stageFail(exitPanic, msgProxyBridgePrefix+err.Error())
		}
		defer hp.close()
	}
	mp, err := buildMounts(p, regDir, mountOptions{roBindFD: a.hasFeature("ro-bind-fd")})
	if err != nil {
		return stageFail(exitBuildFailure, msgBuildPrefix+err.Error())
	}
	exe, err := executablePath()
	if err != nil {
		return stageFail(exitBuildFailure, msgRuntimeUnavailable)
	}
	argv := bwrapArgv(a, plan, mp, exe, hp)
	benv := stageEnv(env)

	if len(mp.targets) == 0 && hp == nil {
		err := unix.Exec(a.bwrap, argv, benv)
		return stageFail(exitBuildFailure, fmt.Sprintf("executing bwrap: %v", err))
	}
	var reg *registry
	if len(mp.targets) > 0 {
		if reg, err = openRegistry(regDir); err != nil {
			var sym *errRegistrySymlink
			if errors.As(err, &sym) {
				return stageFail(exitPanic, err.Error())
			}
			return stageFail(exitBuildFailure, msgBuildPrefix+err.Error())
		}
		defer reg.close()
		if err := reg.claim(mp.targets); err != nil {
			reg.release(mp.targets)
			return stageFail(exitBuildFailure, msgBuildPrefix+err.Error())
		}
	}
	code := superviseBwrap(a.bwrap, argv, benv)
	if reg != nil {
		reg.release(mp.targets)
	}
	// Close the bridge and remove its directory before a re-raised signal ends us.
	hp.close()
	if code < 0 { // terminated by a signal: re-raise it
		sig := unix.Signal(-code)
		signal.Reset(sig)
		unix.Kill(os.Getpid(), sig)
		return 128 + int(sig)
	}
	return code
}

// bwrapArgv is the complete bwrap command line for a launcher invocation a whose
// mounts are mp: namespaces, /proc, --cap-drop ALL, then exe re-entered as the inner
// stage with the same profile and command. --chdir is passed only when the command
// cwd is a symlink alias (its canonical path differs), as in the reference (§3.6).
// Otherwise bwrap, started in the command cwd, enters that directory inside the
// sandbox when the profile shows it, else $HOME, else stays at "/" (observed from
// codex 0.169.0: a command whose cwd the profile hides starts in "/").
func bwrapArgv(a *stageArgs, plan policy.Plan, mp *mountPlan, exe string, hp *hostProxy) []string {
	var chdir string
	if cwd := a.commandCwd; cwd != "" {
		if c, err := filepath.EvalSymlinks(cwd); err == nil && c != filepath.Clean(cwd) {
			chdir = c
		}
	}
	argv := []string{a.bwrap, "--as-pid-1", "--new-session", "--die-with-parent"}
	if a.inheritPID { // --as-pid-1 needs --unshare-pid
		argv = []string{a.bwrap, "--new-session", "--die-with-parent"}
	}
	argv = append(argv, mp.args...)
	if hp != nil {
		argv = append(argv, hp.bwrapArgs()...)
	}
	argv = append(argv, "--unshare-user")
	if !a.inheritPID {
		argv = append(argv, "--unshare-pid")
	}
	argv = append(argv, "--unshare-ipc")
	if plan.UnshareNet {
		argv = append(argv, "--unshare-net")
	}
	if !a.noProc {
		argv = append(argv, "--proc", "/proc")
	}
	if chdir != "" {
		argv = append(argv, "--chdir", chdir)
	}
	argv = append(argv, "--cap-drop", "ALL")
	argv = append(argv, hp.capArgs()...)
	if a.hasFeature("argv0") {
		argv = append(argv, "--argv0", StageArgv0)
	}
	inner := &stageArgs{policyCwd: a.policyCwd, commandCwd: a.commandCwd, profile: a.profile,
		haveProfile: true, arg0: a.arg0, haveArg0: a.haveArg0, inner: true, command: a.command}
	if hp != nil {
		inner.managed, inner.routeSpec = a.managed, hp.spec.encode()
		inner.transparentSetup = hp.transparent
	}
	argv = append(argv, "--", exe, StageFlag)
	return append(argv, inner.encode()...)
}

// superviseBwrap runs bwrap with env in its own process group with Pdeathsig,
// forwarding the four signals, and returns its exit code or -signal.
func superviseBwrap(bin string, argv, env []string) int {
	runtime.LockOSThread() // Pdeathsig is tied to the spawning thread; never unlocked
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, forwardedSignals...)
	defer signal.Stop(sigs)
	proc, err := os.StartProcess(bin, argv, &os.ProcAttr{
		Env:   env,
		Files: []*os.File{os.Stdin, os.Stdout, os.Stderr},
		Sys:   &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM},
	})
	if err != nil {
		return stageFail(exitBuildFailure, fmt.Sprintf("starting bwrap: %v", err))
	}
	done := make(chan struct{})
	go func() { // forwarder, stopped below before returning
		for {
			select {
			case s := <-sigs:
				unix.Kill(proc.Pid, s.(syscall.Signal))
				unix.Kill(-proc.Pid, s.(syscall.Signal))
			case <-done:
				return
			}
		}
	}()
	st, err := proc.Wait()
	close(done)
	if err != nil {
		return exitBuildFailure
	}
	ws := st.Sys().(syscall.WaitStatus)
	if ws.Signaled() {
		return -int(ws.Signal())
	}
	return ws.ExitStatus()
}

// executablePath is the canonical path of this binary.
func executablePath() (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", err
	}
	exe, err = filepath.EvalSymlinks(exe)
	if err != nil {
		return "", err
	}
	if _, err := os.Stat(exe); err != nil {
		return "", err
	}
	return exe, nil
}
