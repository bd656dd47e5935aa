package sandbox_test

import (
	"os/exec"
	"strconv"
	"testing"

	"github.com/execlab/executor/sandbox"
	"github.com/execlab/executor/sandbox/sandboxtest"
)

// TestBubblewrap_PIDNamespace: by default (isolate) a sandboxed command lives in its own
// PID namespace and cannot see or signal a same-UID process outside; with
// Options.InheritPIDNamespace (the reference's --linux-sandbox-pid-namespace inherit) it
// can.
func TestBubblewrap_PIDNamespace(t *testing.T) {
	report := sandboxtest.Require(t, sandbox.BackendBubblewrap)
	sibling := exec.Command("sleep", "60")
	if err := sibling.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sibling.Process.Kill(); _ = sibling.Wait() })
	pid := strconv.Itoa(sibling.Process.Pid)
	script := "if kill -0 " + pid + " 2>/dev/null; then echo signal-ok; else echo signal-denied; fi"
	ctx := managedCtx("restricted", entryJSON(specialJSON("root"), "read"))
	cwd := t.TempDir()

	isolate := runSandboxed(t, sandbox.NewLauncher(report, nil), ctx, cwd, baseEnv(), "/bin/sh", "-c", script)
	if isolate.code != 0 || isolate.stdout != "signal-denied\n" {
		t.Errorf("isolate: got %q (exit %d, stderr %q), want signal-denied", isolate.stdout, isolate.code, isolate.stderr)
	}
	inherit := runSandboxed(t, sandbox.NewLauncher(report, &sandbox.Options{InheritPIDNamespace: true}), ctx, cwd, baseEnv(),
		"/bin/sh", "-c", script)
	if inherit.code != 0 || inherit.stdout != "signal-ok\n" {
		t.Errorf("inherit: got %q (exit %d, stderr %q), want signal-ok", inherit.stdout, inherit.code, inherit.stderr)
	}
}
