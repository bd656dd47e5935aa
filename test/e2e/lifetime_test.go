package e2e_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// markedProcs lists the processes whose environment holds marker, with their process
// group, read from /proc.
func markedProcs(marker string) map[int]int {
	out := map[int]int{}
	eachProc("environ", func(pid int, b []byte) {
		if bytes.Contains(b, []byte(marker)) {
			pgid, _ := syscall.Getpgid(pid)
			out[pid] = pgid
		}
	})
	return out
}

// eachProc calls fn with the pid and the contents of /proc/PID/file of every process whose
// file it can read.
func eachProc(file string, fn func(pid int, b []byte)) {
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if b, err := os.ReadFile(filepath.Join("/proc", e.Name(), file)); err == nil {
			fn(pid, b)
		}
	}
}

func newProcMarker(t *testing.T) (key, value string) {
	t.Helper()
	var b [8]byte
	_, _ = rand.Read(b[:])
	return "EXECUTOR_LIFETIME_MARKER", hex.EncodeToString(b[:])
}

// lifetimeScript leaves, besides its own shell, two background sleeps in its group, one in a
// group of its own inside the session (job control), and a foreground sleep.
const lifetimeScript = `sleep 30 & sleep 31 & (set -m; sleep 32 & wait) & echo ready; sleep 33`

// lifetimeProcs is how many marked processes lifetimeScript runs: sh, three sleeps, the
// subshell, its sleep.
const lifetimeProcs = 6

// waitMarked waits until at least n marked processes run.
func waitMarked(t *testing.T, marker string, n int) map[int]int {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		m := markedProcs(marker)
		if len(m) >= n {
			return m
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d marked processes running, want %d: %v", len(m), n, m)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitNoneMarked waits up to limit for every marked process (and group) to be gone.
func waitNoneMarked(t *testing.T, marker string, groups map[int]int, limit time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	for {
		left := markedProcs(marker)
		alive := 0
		for _, pgid := range groups {
			if syscall.Kill(-pgid, 0) == nil {
				alive++
			}
		}
		if len(left) == 0 && alive == 0 {
			return time.Since(start)
		}
		if time.Since(start) > limit {
			t.Fatalf("%v after kill -9 of the executor: %d marked processes survive (%v), %d of its process groups", limit, len(left), left, alive)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestLifetime_Kill9ServeLeavesNoProcess: `kill -9` of `executor serve` while a session runs
// a pipe process and a PTY process, each with background children and a grandchild in a
// group of its own: within a few seconds no process of either session survives (checked by
// scanning /proc for a marker in the environment and by the sessions' process groups). The
// exec clients exit non-zero with a clear message within 5 s.
func TestLifetime_Kill9ServeLeavesNoProcess(t *testing.T) {
	url, kill := startKillableServe(t)
	key, val := newProcMarker(t)
	var runs []*runningExec
	for _, tty := range []string{"-T", "-t"} {
		r := startExecCLI(t, "", "--url", url, tty, "--env", key+"="+val, "--", "sh", "-c", lifetimeScript)
		waitText(t, "stdout "+tty, r.stdout, "ready", 10*time.Second)
		runs = append(runs, r)
	}
	groups := waitMarked(t, val, 2*lifetimeProcs)
	killed := time.Now()
	kill()
	took := waitNoneMarked(t, val, groups, 5*time.Second)
	t.Logf("every process of both sessions gone %v after kill -9", took.Round(time.Millisecond))
	for i, r := range runs {
		code := r.exitCode(t, 5*time.Second-time.Since(killed)+time.Second)
		t.Logf("exec %d: exit %d after %v, stderr %q", i, code, time.Since(killed).Round(time.Millisecond), r.stderr.String())
		if code == 0 || strings.TrimSpace(r.stderr.String()) == "" {
			t.Errorf("exec %d after kill -9 of the executor: exit %d, stderr %q; want non-zero with a message", i, code, r.stderr.String())
		}
	}
}

// startKillableRemote runs `executor remote` against registryURL and returns a func that
// SIGKILLs it (also run at cleanup).
func startKillableRemote(t *testing.T, registryURL, env, bearer string) func() {
	t.Helper()
	cmd := exec.Command(remoteExecutorBin(t), "remote", "--registry", registryURL, "--environment-id", env, "--registration-bearer-stdin")
	cmd.Env = []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + t.TempDir()}
	cmd.Stdin = strings.NewReader(bearer + "\n")
	var out lockedBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	kill := func() { once.Do(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }) }
	t.Cleanup(func() {
		kill()
		if t.Failed() {
			t.Logf("executor remote output:\n%s", out.String())
		}
	})
	return kill
}

// TestLifetime_Kill9RemoteLeavesNoProcess: the same through a registry: `kill -9` of
// `executor remote` leaves no process of the session behind.
func TestLifetime_Kill9RemoteLeavesNoProcess(t *testing.T) {
	reg := newRestartableRegistry(t)
	const env = "env-lifetime"
	kill := startKillableRemote(t, reg.URL, env, reg.Token)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	waitFor(t, ctx, "the executor to connect", func() bool { return reg.Online(env) })
	tokenFile := reg.TokenFile
	key, val := newProcMarker(t)
	r := startExecCLI(t, "", "--registry", reg.URL, "--environment-id", env, "--token-file", tokenFile,
		"--env", key+"="+val, "--", "sh", "-c", lifetimeScript)
	waitText(t, "stdout", r.stdout, "ready", 20*time.Second)
	groups := waitMarked(t, val, lifetimeProcs)
	kill()
	took := waitNoneMarked(t, val, groups, 5*time.Second)
	t.Logf("every process of the session gone %v after kill -9", took.Round(time.Millisecond))
}
