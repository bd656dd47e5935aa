package process_test

import (
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/execlab/executor/executor/protocol"
	"github.com/execlab/executor/sandbox"
	"github.com/execlab/executor/sandbox/policy"
	"github.com/execlab/executor/sandbox/sandboxtest"
)

// Tests for the spec/sandbox.md §6 pitfalls checklist that are visible from a
// sandboxed process: terminal injection, environment leaks, /proc exposure and
// confinement of the executor itself.

// fullWriteRestricted is the root writable with the network restricted: the plain plan
// (no bwrap).
func fullWriteRestricted(t *testing.T) *policy.Context { return rootProfile(t, "restricted", "write") }

// Terminal injection: under bwrap (--new-session) a PTY command has no controlling
// terminal, so /dev/tty cannot be opened although stdin is a tty; the plain plan
// (full write, no bwrap) keeps the PTY as controlling terminal (parity, §6).
func TestStart_Sandboxed_ControllingTerminal(t *testing.T) {
	l := sandboxtest.Launcher(t, sandbox.BackendBubblewrap)
	script := `test -t 0 && echo isatty; if (exec 3</dev/tty) 2>/dev/null; then echo ctty-open; else echo ctty-refused; fi`
	tests := []struct {
		name, want, notWant string
		ctx                 *policy.Context
	}{
		{"bwrap: no controlling terminal", "ctty-refused", "ctty-open", readOnly(t)},
		{"plain plan: controlling terminal kept", "ctty-open", "ctty-refused", fullWriteRestricted(t)},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, n := sandboxedManager(t, l)
			p := startParams("tty"+strconv.Itoa(i), tmpURI(t), "sh", "-c", script)
			p.Tty, p.Sandbox = true, tt.ctx
			_, out, exited, _ := runToExit(t, m, n, p)
			if exited.code != 0 || !strings.Contains(out, "isatty") || !strings.Contains(out, tt.want) || strings.Contains(out, tt.notWant) {
				t.Errorf("got exit %d output %q, want isatty and %s", exited.code, out, tt.want)
			}
		})
	}
}

// Environment leaks: the command's environment is exactly the request's plus the PWD
// that bwrap sets to the directory it entered (the reference's commands see it too:
// scenario sandbox_process_env_tty); the sandbox neither adds nor removes
// CODEX_SANDBOX_NETWORK_DISABLED (network_env_marker, parity).
func TestStart_Sandboxed_EnvironmentUnchanged(t *testing.T) {
	l := sandboxtest.Launcher(t, sandbox.BackendBubblewrap)
	tests := []struct {
		name string
		ctx  *policy.Context
		env  map[string]string
	}{
		{"restricted network adds no marker", rootProfile(t, "restricted", "read"),
			map[string]string{"PATH": "/usr/bin:/bin", "HOME": "/root", "FOO": "bar"}},
		{"enabled network keeps a client marker", rootProfile(t, "enabled", "read"),
			map[string]string{"PATH": "/usr/bin:/bin", "CODEX_SANDBOX_NETWORK_DISABLED": "1"}},
		{"restricted network keeps a client marker", rootProfile(t, "restricted", "read"),
			map[string]string{"PATH": "/usr/bin:/bin", "CODEX_SANDBOX_NETWORK_DISABLED": "0"}},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, n := sandboxedManager(t, l)
			cwd := tmpURI(t)
			p := startParams("env"+strconv.Itoa(i), cwd, "/usr/bin/env")
			p.Env, p.Sandbox = tt.env, tt.ctx
			_, out, exited, _ := runToExit(t, m, n, p)
			native, _ := cwd.Native()
			want := []string{"PWD=" + native}
			for k, v := range tt.env {
				want = append(want, k+"="+v)
			}
			got := strings.Split(strings.TrimSpace(out), "\n")
			sort.Strings(got)
			sort.Strings(want)
			if exited.code != 0 || strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("got exit %d env %q, want exactly %q", exited.code, got, want)
			}
		})
	}
}

// /proc exposure: a fresh /proc per PID namespace lists only the sandbox's own
// processes (the inner stage as pid 1, the command and its children).
func TestStart_Sandboxed_ProcShowsOnlySandbox(t *testing.T) {
	l := sandboxtest.Launcher(t, sandbox.BackendBubblewrap)
	m, n := sandboxedManager(t, l)
	p := startParams("proc", tmpURI(t), "sh", "-c", "ls /proc")
	p.Sandbox = readOnly(t)
	_, out, exited, _ := runToExit(t, m, n, p)
	var pids []int
	for _, f := range strings.Fields(out) {
		if pid, err := strconv.Atoi(f); err == nil {
			pids = append(pids, pid)
		}
	}
	if exited.code != 0 || len(pids) == 0 || len(pids) > 4 {
		t.Fatalf("got exit %d and pids %v in /proc, want a handful (inner stage, sh, ls)", exited.code, pids)
	}
	for _, pid := range pids {
		if pid == os.Getpid() || pid > 16 {
			t.Errorf("/proc lists pid %d: a host process is visible", pid)
		}
	}
}

// NNP/seccomp only inside: after sandboxed runs the executor's own threads are still
// unconfined (the filter is installed in the stages, never in the executor).
func TestStart_Sandboxed_ExecutorStaysUnconfined(t *testing.T) {
	l := sandboxtest.Launcher(t, sandbox.BackendBubblewrap)
	m, n := sandboxedManager(t, l)
	for i, ctx := range []*policy.Context{readOnly(t), fullWriteRestricted(t)} {
		p := startParams("conf"+strconv.Itoa(i), tmpURI(t), "sh", "-c", "grep -E '^(NoNewPrivs|Seccomp):' /proc/self/status")
		p.Sandbox = ctx
		_, out, _, _ := runToExit(t, m, n, p)
		if !strings.Contains(out, "NoNewPrivs:\t1") || !strings.Contains(out, "Seccomp:\t2") {
			t.Errorf("command %d status %q, want NoNewPrivs 1 and Seccomp 2", i, out)
		}
	}
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		t.Fatal(err)
	}
	for _, task := range tasks {
		b, err := os.ReadFile("/proc/self/task/" + task.Name() + "/status")
		if err != nil {
			continue // the thread exited meanwhile
		}
		s := string(b)
		if !strings.Contains(s, "NoNewPrivs:\t0") || !strings.Contains(s, "Seccomp:\t0") {
			t.Errorf("executor thread %s is confined: %q", task.Name(), s)
		}
	}
}

// Hard links (§6): a sandboxed command cannot hard-link a file from outside its
// writable root into it (the bind mounts are separate mounts: EXDEV).
func TestStart_Sandboxed_HardLinkIntoWritableRootFails(t *testing.T) {
	l := sandboxtest.Launcher(t, sandbox.BackendBubblewrap)
	ws := t.TempDir()
	outside := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(outside, []byte("s"), 0o644); err != nil {
		t.Fatal(err)
	}
	m, n := sandboxedManager(t, l)
	p := startParams("ln", protocol.FromNative(ws), "sh", "-c", "ln "+outside+" x && echo linked; ln /etc/hostname y && echo linked")
	p.Env["HOME"] = ws
	p.Sandbox = sandboxtest.WorkspaceWrite(t, ws)
	_, out, exited, _ := runToExit(t, m, n, p)
	if strings.Contains(out, "linked") || !strings.Contains(out, "Invalid cross-device link") || exited.code == 0 {
		t.Errorf("got exit %d output %q, want both links refused with EXDEV", exited.code, out)
	}
	for _, f := range []string{"x", "y"} {
		if _, err := os.Lstat(filepath.Join(ws, f)); err == nil {
			t.Errorf("%s was created in the writable root", f)
		}
	}
}
