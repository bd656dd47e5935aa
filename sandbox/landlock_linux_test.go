package sandbox_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/execlab/executor/sandbox"
	"github.com/execlab/executor/sandbox/policy"
)

func landlockLauncher(t *testing.T) *sandbox.Launcher {
	t.Helper()
	r := sandbox.Probe(context.Background(), &sandbox.ProbeOptions{Backend: sandbox.BackendLandlock})
	if r.Backend != sandbox.BackendLandlock {
		msg := "landlock backend unavailable: " + r.LogLine()
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return sandbox.NewLauncher(r, nil)
}

func TestDegraded_ReadOnlyFull(t *testing.T) {
	l := landlockLauncher(t)
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
	l := landlockLauncher(t)
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
	l := landlockLauncher(t)
	w := t.TempDir()
	ctx := managedCtx("restricted", entryJSON(specialJSON("root"), "write"))
	wantOut(t, "write", probeRun(t, l, ctx, "/", "write", filepath.Join(w, "f")), "ok")
	wantOut(t, "connect", probeRun(t, l, ctx, "/", "tcp"), "EPERM")
}

func TestDegraded_Refusals(t *testing.T) {
	l := landlockLauncher(t)
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
			p, err := policy.Resolve(decodeCtx(t, tt.ctx), &policy.ResolveOptions{CommandCwd: "/"})
			if err != nil {
				t.Fatal(err)
			}
			_, err = l.Wrap(&sandbox.Request{Policy: p, EnforceManagedNetwork: tt.managed, Argv: []string{"true"}, Cwd: "/"})
			var pe *policy.Error
			if !errors.As(err, &pe) || pe.Code != policy.CodeInvalidParams ||
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
	p, _ := policy.Resolve(decodeCtx(t, managedCtx("restricted", entryJSON(specialJSON("root"), "read"))), &policy.ResolveOptions{CommandCwd: "/"})
	_, err := l.Wrap(&sandbox.Request{Policy: p, Argv: []string{"true"}, Cwd: "/"})
	var pe *policy.Error
	if !errors.As(err, &pe) || pe.Code != policy.CodeInvalidParams {
		t.Fatalf("got %v, want -32602", err)
	}
}
