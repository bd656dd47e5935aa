package sandbox

// Degraded backend (spec/sandbox.md §3.11): Landlock + seccomp + capability drop on a
// locked spawn thread, the command in a new session, the launcher as child subreaper
// that kills leftover descendants when the command exits. Raw syscalls via x/sys/unix;
// the ruleset handles exactly the rights of the running kernel's ABI.

import (
	"errors"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/execlab/executor/sandbox/policy"
)

const (
	llRead     = unix.LANDLOCK_ACCESS_FS_EXECUTE | unix.LANDLOCK_ACCESS_FS_READ_FILE | unix.LANDLOCK_ACCESS_FS_READ_DIR
	llFileMask = unix.LANDLOCK_ACCESS_FS_EXECUTE | unix.LANDLOCK_ACCESS_FS_WRITE_FILE | unix.LANDLOCK_ACCESS_FS_READ_FILE |
		unix.LANDLOCK_ACCESS_FS_TRUNCATE | unix.LANDLOCK_ACCESS_FS_IOCTL_DEV
	// landlockRulesetAttrSize is sizeof(struct landlock_ruleset_attr) up to `scoped`
	// (ABI 6); later fields are not used.
	landlockRulesetAttrSize = 24
)

// landlockABI returns the kernel's Landlock ABI version, 0 when unavailable.
func landlockABI() int {
	v, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION)
	if errno != 0 {
		return 0
	}
	return int(v)
}

// landlockFSRights is every filesystem right of ABI abi.
func landlockFSRights(abi int) uint64 {
	r := uint64(0x1fff) // ABI 1: EXECUTE .. MAKE_SYM
	if abi >= 2 {
		r |= unix.LANDLOCK_ACCESS_FS_REFER
	}
	if abi >= 3 {
		r |= unix.LANDLOCK_ACCESS_FS_TRUNCATE
	}
	if abi >= 5 {
		r |= unix.LANDLOCK_ACCESS_FS_IOCTL_DEV
	}
	return r
}

// restrictLandlock builds and applies the ruleset on the calling thread.
func restrictLandlock(p *policy.Policy, ents []mountEntry, abi int) error {
	all := landlockFSRights(abi)
	attr := unix.LandlockRulesetAttr{Handled_access_fs: all,
		Scoped: unix.LANDLOCK_SCOPE_SIGNAL | unix.LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET}
	if p.Network == policy.NetworkRestricted {
		attr.Handled_access_net = unix.LANDLOCK_ACCESS_NET_BIND_TCP | unix.LANDLOCK_ACCESS_NET_CONNECT_TCP
	}
	fd, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, uintptr(unsafe.Pointer(&attr)), landlockRulesetAttrSize, 0)
	if errno != 0 {
		return fmt.Errorf("creating landlock ruleset: %w", errno)
	}
	defer unix.Close(int(fd))
	addRuleFD := func(pfd int, path string, rights uint64) error {
		var st unix.Stat_t
		if err := unix.Fstat(pfd, &st); err != nil {
			return fmt.Errorf("inspecting %s: %w", path, err)
		}
		if st.Mode&unix.S_IFMT != unix.S_IFDIR {
			rights &= llFileMask
		}
		rights &= all
		rule := unix.LandlockPathBeneathAttr{Allowed_access: rights, Parent_fd: int32(pfd)}
		if _, _, errno := unix.Syscall6(unix.SYS_LANDLOCK_ADD_RULE, fd, unix.LANDLOCK_RULE_PATH_BENEATH,
			uintptr(unsafe.Pointer(&rule)), 0, 0, 0); errno != 0 {
			return fmt.Errorf("adding landlock rule for %s: %w", path, errno)
		}
		return nil
	}
	addRule := func(path string, rights uint64) error {
		pfd, err := unix.Open(path, unix.O_PATH|unix.O_CLOEXEC, 0)
		if err != nil {
			return nil // missing paths grant nothing
		}
		defer unix.Close(pfd)
		return addRuleFD(pfd, path, rights)
	}
	for _, e := range ents {
		switch e.access {
		case policy.AccessRead:
			if err := addRule(e.path, llRead); err != nil {
				return err
			}
		case policy.AccessWrite:
			// The rule is the inode of a walk that follows no symlink inside another
			// writable root (nested_linux.go), as bwrap's binds are.
			r, err := resolveWritableRoot(ents, e.path)
			if errors.Is(err, errRootMissing) {
				continue // missing paths grant nothing
			}
			if err != nil {
				return err
			}
			err = addRuleFD(r.fd, e.path, all)
			unix.Close(r.fd)
			if err != nil {
				return err
			}
		}
	}
	if err := addRule("/proc", llRead); err != nil {
		return err
	}
	for _, dev := range []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty", "/dev/ptmx", "/dev/pts"} {
		if err := addRule(dev, all); err != nil {
			return err
		}
	}
	if _, _, errno := unix.Syscall(unix.SYS_LANDLOCK_RESTRICT_SELF, fd, 0, 0); errno != 0 {
		return fmt.Errorf("restricting with landlock: %w", errno)
	}
	return nil
}

// runLandlock is the degraded launcher (§3.11).
func runLandlock(a *stageArgs, p *policy.Policy, plan policy.Plan, env []string) int {
	if r := landlockRefusal(p, plan.Managed); r != "" {
		return stageFail(exitBuildFailure, msgUnenforceable+"degraded Landlock backend cannot express "+r)
	}
	abi := landlockABI()
	if abi < landlockMinABI {
		return stageFail(exitBuildFailure, msgUnenforceable+"Landlock ABI "+strconv.Itoa(abi)+" is too old")
	}
	ents, err := launchEntries(p)
	if err != nil {
		return stageFail(exitBuildFailure, msgBuildPrefix+err.Error())
	}
	if p.FullRead() && p.Restricted {
		ents = append(ents, mountEntry{path: "/", access: policy.AccessRead})
	}
	bin, argv, err := resolveCommand(a, env)
	if err != nil {
		return execFailed(a, err)
	}
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return stageFail(exitBuildFailure, fmt.Sprintf("setting child subreaper: %v", err))
	}
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, forwardedSignals...)
	type started struct {
		pid int
		err error
	}
	ch := make(chan started, 1)
	go func() { // confined spawn thread; never unlocked, dies with this goroutine
		runtime.LockOSThread()
		fail := func(err error) { ch <- started{err: err} }
		if err := dropAllCaps(); err != nil {
			fail(err)
			return
		}
		if held, err := capsRetained(); err != nil || held {
			fail(fmt.Errorf("%s", msgRetainedCaps))
			return
		}
		if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
			fail(fmt.Errorf("setting no_new_privs: %w", err))
			return
		}
		if p.Restricted && !p.FullWrite() {
			if err := restrictLandlock(p, ents, abi); err != nil {
				fail(err)
				return
			}
		}
		if err := installSeccomp(plan.Seccomp, SeccompOptions{}); err != nil {
			fail(err)
			return
		}
		proc, err := os.StartProcess(bin, argv, &os.ProcAttr{
			Env: env, Files: []*os.File{os.Stdin, os.Stdout, os.Stderr},
			Sys: &syscall.SysProcAttr{Setsid: true},
		})
		if err != nil {
			fail(&startError{err})
			return
		}
		ch <- started{pid: proc.Pid}
		proc.Release()
	}()
	s := <-ch
	if s.err != nil {
		var se *startError
		if errors.As(s.err, &se) {
			return execFailed(a, se.err)
		}
		return stageFail(exitBuildFailure, s.err.Error())
	}
	code := reapAsInit(s.pid, sigs)
	killDescendants()
	return code
}

// startError is a failure to execute the command itself (not to confine it).
type startError struct{ err error }

func (e *startError) Error() string { return "starting command: " + e.err.Error() }

// killDescendants SIGKILLs every remaining descendant (reparented to us as subreaper)
// and reaps them.
func killDescendants() {
	for round := 0; round < 64; round++ {
		kids := childrenOf(os.Getpid())
		if len(kids) == 0 {
			break
		}
		for _, k := range kids {
			unix.Kill(k, unix.SIGKILL)
		}
		for {
			var ws unix.WaitStatus
			if pid, err := unix.Wait4(-1, &ws, unix.WNOHANG, nil); pid <= 0 || err != nil {
				break
			}
		}
	}
	for {
		var ws unix.WaitStatus
		if _, err := unix.Wait4(-1, &ws, 0, nil); err != nil {
			return
		}
	}
}

func childrenOf(pid int) []int {
	tasks, _ := os.ReadDir("/proc/" + strconv.Itoa(pid) + "/task")
	var out []int
	for _, t := range tasks {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/task/" + t.Name() + "/children")
		if err != nil {
			continue
		}
		for _, f := range strings.Fields(string(b)) {
			if n, err := strconv.Atoi(f); err == nil {
				out = append(out, n)
			}
		}
	}
	return out
}
