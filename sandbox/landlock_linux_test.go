package sandbox_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/execlab/executor/jsonwire"
	"github.com/execlab/executor/sandbox"
	"github.com/execlab/executor/sandbox/policy"
	"github.com/execlab/executor/sandbox/sandboxtest"
)

func TestDegraded_ReadOnlyFull(t *testing.T) {
	l := sandboxtest.Launcher(t, sandbox.BackendLandlock)
	outside := t.TempDir()
	ctx := managedCtx("restricted", entryJSON(specialJSON("root"), "read"))
	res := probeRun(t, l, ctx, "/", "read", "/etc/hostname")
	wantOut(t, "degraded read", res, "ok")
	if res.cmd.Backend != sandbox.BackendLandlock || res.cmd.SandboxType != sandbox.SandboxTypeLinuxSeccomp {
		t.Errorf("got backend %q type %q, want landlock linuxSeccomp", res.cmd.Backend, res.cmd.SandboxType)
	}
	wantOut(t, "degraded write", probeRun(t, l, ctx, "/", "write", filepath.Join(outside, "f")), "EACCES")
	wantOut(t, "degraded tcp", probeRun(t, l, ctx, "/", "tcp"), "EPERM")
	res = probeRun(t, l, ctx, "/", "status")
	if want := "CapPrm: 0000000000000000\nCapEff: 0000000000000000\nNoNewPrivs: 1\nSeccomp: 2"; strings.TrimSpace(res.stdout) != want {
		t.Errorf("degraded_no_cap: got %q, want %q (stderr %q)", res.stdout, want, res.stderr)
	}
}

func TestDegraded_ReadAllowList(t *testing.T) {
	l := sandboxtest.Launcher(t, sandbox.BackendLandlock)
	allowed, hidden := t.TempDir(), t.TempDir()
	for _, d := range []string{allowed, hidden} {
		os.WriteFile(filepath.Join(d, "f"), []byte("x"), 0o644)
	}
	ctx := managedCtx("restricted", entryJSON(specialJSON("minimal"), "read"), entryJSON(pathJSON(allowed), "read"))
	wantOut(t, "allowed", probeRun(t, l, ctx, "/", "read", filepath.Join(allowed, "f")), "ok")
	wantOut(t, "hidden", probeRun(t, l, ctx, "/", "read", filepath.Join(hidden, "f")), "EACCES")
	wantOut(t, "/dev/null", probeRun(t, l, ctx, "/", "write", "/dev/null"), "ok")
}

func TestDegraded_FullWriteSeccompOnly(t *testing.T) {
	l := sandboxtest.Launcher(t, sandbox.BackendLandlock)
	w := t.TempDir()
	ctx := managedCtx("restricted", entryJSON(specialJSON("root"), "write"))
	wantOut(t, "write", probeRun(t, l, ctx, "/", "write", filepath.Join(w, "f")), "ok")
	wantOut(t, "connect", probeRun(t, l, ctx, "/", "tcp"), "EPERM")
}

func TestDegraded_Refusals(t *testing.T) {
	l := sandboxtest.Launcher(t, sandbox.BackendLandlock)
	w := t.TempDir()
	rootRead := entryJSON(specialJSON("root"), "read")
	tests := []struct {
		name, ctx string
		managed   bool
		want      string
	}{
		{"workspace-write", managedCtx("restricted", rootRead, entryJSON(pathJSON(w), "write")), false, "writable root " + w},
		{"deny-under-read", managedCtx("restricted", rootRead, entryJSON(pathJSON(w), "deny")), false, "deny path " + w},
		{"deny glob", managedCtx("restricted", rootRead, entryJSON(globJSON(w+"/*.env"), "deny")), false, "deny glob " + w + "/*.env"},
		{"managed", managedCtx("restricted", rootRead), true, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := policy.Resolve(sandboxtest.Context(t, tt.ctx), &policy.ResolveOptions{CommandCwd: "/"})
			if err != nil {
				t.Fatal(err)
			}
			_, err = l.Wrap(&sandbox.Request{Policy: p, EnforceManagedNetwork: tt.managed, Argv: []string{"true"}, Cwd: "/"})
			var pe *policy.Error
			if !errors.As(err, &pe) || pe.Code != jsonwire.CodeInvalidParams ||
				!strings.HasPrefix(pe.Message, "sandbox intent cannot be enforced on this executor: ") ||
				tt.want != "" && pe.Message != "sandbox intent cannot be enforced on this executor: degraded Landlock backend cannot express "+tt.want {
				t.Fatalf("got %v, want -32602 refusal %q", err, tt.want)
			}
		})
	}
}

func TestDegraded_ABIGate(t *testing.T) {
	r := sandbox.Probe(context.Background(), &sandbox.ProbeOptions{Backend: sandbox.BackendLandlock, FakeLandlockABI: 5})
	if r.Backend != sandbox.BackendNone {
		t.Fatalf("degraded_abi_gate: got backend %q, want none", r.Backend)
	}
	l := sandbox.NewLauncher(r, nil)
	p, _ := policy.Resolve(sandboxtest.Context(t, managedCtx("restricted", entryJSON(specialJSON("root"), "read"))), &policy.ResolveOptions{CommandCwd: "/"})
	_, err := l.Wrap(&sandbox.Request{Policy: p, Argv: []string{"true"}, Cwd: "/"})
	var pe *policy.Error
	if !errors.As(err, &pe) || pe.Code != jsonwire.CodeInvalidParams {
		t.Fatalf("got %v, want -32602", err)
	}
}

// degraded_refer_and_truncate: with every protected name under /w covered by a write
// entry, workspace-write is expressible; a rename across directories inside /w works
// (LANDLOCK_ACCESS_FS_REFER), truncating a file outside /w does not.
func TestDegraded_ReferAndTruncate(t *testing.T) {
	l := sandboxtest.Launcher(t, sandbox.BackendLandlock)
	w, outside := t.TempDir(), t.TempDir()
	for _, d := range []string{"a", "b"} {
		if err := os.Mkdir(filepath.Join(w, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(w, "a", "f"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	victim := filepath.Join(outside, "keep")
	if err := os.WriteFile(victim, []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	entries := []string{entryJSON(specialJSON("root"), "read"), entryJSON(pathJSON(w), "write")}
	for _, n := range policy.ProtectedMetadataNames {
		entries = append(entries, entryJSON(pathJSON(filepath.Join(w, n)), "write"))
	}
	ctx := managedCtx("restricted", entries...)
	res := runSandboxed(t, l, ctx, w, baseEnv(), "/bin/sh", "-c",
		`mv a/f b/f && echo moved; truncate -s 0 `+victim+` 2>/dev/null && echo truncated || echo refused`)
	if res.cmd.Backend != sandbox.BackendLandlock {
		t.Fatalf("got backend %q, want landlock", res.cmd.Backend)
	}
	if got := strings.TrimSpace(res.stdout); got != "moved\nrefused" {
		t.Errorf("got %q (exit %d, stderr %q), want moved and refused", got, res.code, res.stderr)
	}
	if b, _ := os.ReadFile(victim); string(b) != "keep" {
		t.Errorf("file outside the writable root: got %q, want it untouched", b)
	}
}

// degraded_no_cap_no_signal_reaped: the command cannot signal the executor (Landlock
// signal scope: no PID namespace hides it here), and a background child it leaves
// behind is killed when it exits.
func TestDegraded_NoSignalAndReaped(t *testing.T) {
	l := sandboxtest.Launcher(t, sandbox.BackendLandlock)
	ctx := managedCtx("restricted", entryJSON(specialJSON("root"), "read"))
	script := `kill -0 ` + strconv.Itoa(os.Getpid()) + ` 2>/dev/null && echo signalled || echo refused; ` +
		`sleep 30 >/dev/null 2>&1 & echo $!`
	res := runSandboxed(t, l, ctx, "/", baseEnv(), "/bin/sh", "-c", script)
	lines := strings.Split(strings.TrimSpace(res.stdout), "\n")
	if len(lines) != 2 || lines[0] != "refused" || res.code != 0 {
		t.Fatalf("got %q (exit %d, stderr %q), want refused and the background pid", res.stdout, res.code, res.stderr)
	}
	pid, _ := strconv.Atoi(lines[1])
	if pid <= 0 {
		t.Fatalf("background pid %q", lines[1])
	}
	deadline := time.Now().Add(5 * time.Second)
	for processAlive(pid) {
		if time.Now().After(deadline) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("background sleep %d still alive after the command exited", pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// processAlive reports whether pid exists and is not a zombie.
func processAlive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}
