package sandbox

// Startup probe (spec/sandbox.md §3.3) and bwrap discovery (§3.5).

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/execlab/executor/sandbox/policy"
)

// Probe inspects the host: seccomp, Landlock ABI, bwrap (path, version, features),
// user namespaces and /proc mounting. Each child probe has a 5 s timeout. Safe to call
// concurrently; it starts and waits for short-lived children only.
func Probe(ctx context.Context, opts *ProbeOptions) Report {
	o := ProbeOptions{}
	if opts != nil {
		o = *opts
	}
	if o.PATH == "" {
		o.PATH = os.Getenv("PATH")
	}
	if o.Cwd == "" {
		o.Cwd, _ = os.Getwd()
	}
	r := Report{Warnings: []string{}}
	r.Seccomp = probeSeccomp()
	r.LandlockABI = landlockABI()
	if o.FakeLandlockABI != 0 {
		r.LandlockABI = o.FakeLandlockABI
	}
	if info, ok := discoverBwrap(ctx, o.PATH, []string{o.Cwd}); ok {
		r.Bubblewrap = info
		r.UserNamespaces = probeUserns(ctx, info.Path)
		if r.UserNamespaces {
			r.ProcMount = probeProc(ctx, info.Path)
			if !r.ProcMount {
				r.Warnings = append(r.Warnings, "bwrap cannot mount /proc; sandboxed commands see the host /proc")
			}
		}
	}
	r.chooseBackend(o.Backend)
	return r
}

// probeSeccomp installs a trivial filter on a throwaway locked thread: the goroutine
// exits without unlocking, so the runtime discards the confined thread. The main
// thread is never confined: the runtime cannot discard it (it would stay wedged,
// confined, for the life of the process). An attempt that lands on the main thread
// holds it, unconfined, until the probe is over, so the next attempt runs elsewhere.
func probeSeccomp() bool {
	if runtime.GOARCH != "amd64" && runtime.GOARCH != "arm64" {
		return false
	}
	const (
		failed = iota
		installed
		onMainThread
	)
	release := make(chan struct{})
	defer close(release) // lets a goroutine holding the main thread unlock it and return
	for attempt := 0; attempt < 2; attempt++ {
		res := make(chan int, 1)
		go func() {
			runtime.LockOSThread()
			if unix.Gettid() == unix.Getpid() {
				res <- onMainThread
				<-release
				runtime.UnlockOSThread()
				return
			}
			if installSeccomp(policy.SeccompVmSocketRestricted, SeccompOptions{}) != nil {
				res <- failed
				return // the thread may be half-confined (NNP): discarded all the same
			}
			res <- installed // never unlocked: the confined thread is discarded
		}()
		switch <-res {
		case installed:
			return true
		case failed:
			return false
		}
	}
	return false
}

// discoverBwrap returns the first usable bwrap on path (§3.5): canonicalized, not under
// any of excluded, not group/world-writable (file or parent), owned by root or euid,
// whose --help mentions --perms and --as-pid-1.
func discoverBwrap(ctx context.Context, path string, excluded []string) (*BwrapInfo, bool) {
	seen := map[string]bool{}
	for _, dir := range filepath.SplitList(path) {
		if !strings.HasPrefix(dir, "/") {
			continue // relative PATH entries resolve against a cwd we do not trust
		}
		cand, err := filepath.EvalSymlinks(filepath.Join(dir, "bwrap"))
		if err != nil || seen[cand] {
			continue
		}
		seen[cand] = true
		if !trustedBinary(cand, excluded) {
			continue
		}
		if info, ok := inspectBwrap(ctx, cand); ok {
			return info, true
		}
	}
	return nil, false
}

func trustedBinary(p string, excluded []string) bool {
	for _, ex := range excluded {
		if ex != "" && ex != "/" && policy.IsWithin(p, filepath.Clean(ex)) {
			return false
		}
	}
	for _, q := range []string{p, filepath.Dir(p)} {
		var st unix.Stat_t
		if unix.Stat(q, &st) != nil {
			return false
		}
		if st.Mode&0o022 != 0 || st.Uid != 0 && int(st.Uid) != os.Geteuid() {
			return false
		}
		if q == p && st.Mode&unix.S_IFMT != unix.S_IFREG {
			return false
		}
	}
	return true
}

func inspectBwrap(ctx context.Context, p string) (*BwrapInfo, bool) {
	help, _, _ := runProbe(ctx, p, "--help")
	h := string(help)
	if !strings.Contains(h, "--perms") || !strings.Contains(h, "--as-pid-1") {
		return nil, false
	}
	feats := []string{"perms", "as-pid-1"}
	if strings.Contains(h, "--ro-bind-fd") {
		feats = append(feats, "ro-bind-fd")
	}
	if strings.Contains(h, "--argv0") {
		feats = append(feats, "argv0")
	}
	out, _, _ := runProbe(ctx, p, "--version")
	ver := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(string(out)), "bubblewrap"))
	return &BwrapInfo{Path: p, Version: ver, Features: feats}, true
}

// runProbe runs a short-lived child with the probe timeout; stderr is capped.
func runProbe(ctx context.Context, bin string, args ...string) (stdout, stderr []byte, err error) {
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &capped{buf: &e, limit: probeStderrLimit}
	cmd.Env = []string{"PATH=/usr/bin:/bin"}
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	err = cmd.Run()
	return o.Bytes(), e.Bytes(), err
}

type capped struct {
	buf   *bytes.Buffer
	limit int
}

func (c *capped) Write(p []byte) (int, error) {
	if room := c.limit - c.buf.Len(); room > 0 {
		c.buf.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}

var usernsFailures = []string{"loopback: Failed RTM_NEWADDR", "loopback: Failed RTM_NEWLINK",
	"setting up uid map: Permission denied", "No permissions to create a new namespace"}

func trueBinary() string {
	for _, p := range []string{"/usr/bin/true", "/bin/true"} {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return "/bin/true"
}

func probeUserns(ctx context.Context, bwrap string) bool {
	_, stderr, err := runProbe(ctx, bwrap, "--unshare-user", "--unshare-net", "--ro-bind", "/", "/", trueBinary())
	for _, f := range usernsFailures {
		if bytes.Contains(stderr, []byte(f)) {
			return false
		}
	}
	return err == nil
}

// probeProc runs the reference's /proc preflight (§3.3).
func probeProc(ctx context.Context, bwrap string) bool {
	args := []string{"--as-pid-1", "--new-session", "--die-with-parent", "--tmpfs", "/", "--dev", "/dev"}
	for _, r := range policy.PlatformReadRoots {
		if _, err := os.Stat(r); err == nil {
			args = append(args, "--ro-bind", r, r)
		}
	}
	args = append(args, "--unshare-user", "--unshare-pid", "--unshare-ipc", "--unshare-net",
		"--proc", "/proc", "--cap-drop", "ALL", "--", trueBinary())
	_, stderr, err := runProbe(ctx, bwrap, args...)
	if procMountFailed(string(stderr)) {
		return false
	}
	var ee *exec.ExitError
	return err == nil || !errors.As(err, &ee)
}

// procMountFailed is the reference's /proc preflight matcher.
func procMountFailed(stderr string) bool {
	if !strings.Contains(stderr, "Can't mount proc") || !strings.Contains(stderr, "/newroot/proc") {
		return false
	}
	for _, s := range []string{"Invalid argument", "Operation not permitted", "Permission denied"} {
		if strings.Contains(stderr, s) {
			return true
		}
	}
	return false
}
