package sandbox_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/execlab/executor/jsonwire"
	"github.com/execlab/executor/sandbox"
	"github.com/execlab/executor/sandbox/policy"
	"github.com/execlab/executor/sandbox/sandboxtest"
)

func TestProbe_ReportsLayers(t *testing.T) {
	r := sandboxtest.Report("")
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	json.Unmarshal(b, &m)
	for _, k := range []string{"backend", "userNamespaces", "seccomp", "landlockAbi", "procMount", "bubblewrap", "warnings"} {
		if _, ok := m[k]; !ok {
			t.Errorf("report JSON %s: missing %q", b, k)
		}
	}
	line := r.LogLine()
	if !strings.HasPrefix(line, "sandbox backend="+r.Backend+" ") {
		t.Errorf("log line %q does not agree with backend %q", line, r.Backend)
	}
}

func TestWrap_NoIntentAndErrors(t *testing.T) {
	l := sandbox.NewLauncher(sandboxtest.Report(""), nil)
	cmd, err := l.Wrap(&sandbox.Request{Argv: []string{"true"}, Cwd: "/"})
	if cmd != nil || err != nil {
		t.Errorf("no intent: got (%v, %v), want (nil, nil)", cmd, err)
	}
	var pe *policy.Error
	// Managed network without a sandbox field is a disabled profile under managed
	// network (deviation, spec/sandbox.md §2.9): bubblewrap only.
	for _, tt := range []struct {
		report      sandbox.Report
		wantBackend string
		wantErr     string
	}{
		{sandbox.Report{Backend: sandbox.BackendBubblewrap, Seccomp: true, ProcMount: true,
			Bubblewrap: &sandbox.BwrapInfo{Path: "/usr/bin/bwrap"}}, sandbox.BackendBubblewrap, ""},
		{sandbox.Report{Backend: sandbox.BackendLandlock, Seccomp: true, LandlockABI: 7}, "",
			"sandbox intent cannot be enforced on this executor: degraded Landlock backend cannot express managed network"},
		{sandbox.Report{Backend: sandbox.BackendNone, Seccomp: true}, "",
			"sandbox intent cannot be enforced on this executor: bubblewrap is unavailable: no usable bwrap was found on PATH"},
		{sandbox.Report{Backend: sandbox.BackendBubblewrap, Bubblewrap: &sandbox.BwrapInfo{Path: "/usr/bin/bwrap"}}, "",
			"sandbox intent cannot be enforced on this executor: seccomp is unavailable"},
	} {
		cmd, err := sandbox.NewLauncher(tt.report, nil).Wrap(&sandbox.Request{EnforceManagedNetwork: true,
			ManagedNetwork: &sandbox.ManagedNetwork{LoopbackPorts: []uint16{3128}}, Argv: []string{"true"}, Cwd: "/"})
		switch {
		case tt.wantErr != "":
			if !errors.As(err, &pe) || pe.Code != jsonwire.CodeInvalidParams || pe.Message != tt.wantErr {
				t.Errorf("managed on %s: got (%v, %v), want -32602 %q", tt.report.Backend, cmd, err, tt.wantErr)
			}
		case err != nil || cmd == nil || cmd.Backend != tt.wantBackend || cmd.SandboxType != sandbox.SandboxTypeLinuxSeccomp:
			t.Errorf("managed on %s: got (%+v, %v), want backend %s", tt.report.Backend, cmd, err, tt.wantBackend)
		case !strings.Contains(strings.Join(cmd.Args, " "), `--managed-network {"loopbackPorts":[3128],"allowLocalBinding":false,"allowUnixSockets":[],"dangerouslyAllowAllUnixSockets":false}`):
			t.Errorf("managed stage args: got %q, want --managed-network with all four fields", cmd.Args)
		}
	}
	gone := sandbox.NewLauncher(sandboxtest.Report(""), &sandbox.Options{Executable: "/nonexistent/executor"})
	_, err = gone.Wrap(&sandbox.Request{Policy: &policy.Policy{Cwd: "/"}, Argv: []string{"true"}, Cwd: "/"})
	if !errors.As(err, &pe) || pe.Code != jsonwire.CodeInternal || pe.Message != "sandbox runtime paths are not configured" {
		t.Errorf("deleted executor: got %v, want -32603", err)
	}
}

// BenchmarkSandboxedTrue measures a one-shot sandboxed /bin/true through bubblewrap.
func BenchmarkSandboxedTrue(b *testing.B) {
	r := sandboxtest.Report("")
	if r.Backend != sandbox.BackendBubblewrap {
		b.Skip("bubblewrap unavailable")
	}
	l := sandbox.NewLauncher(r, nil)
	t := &testing.T{}
	p, err := policy.Resolve(sandboxtest.Context(t, managedCtx("restricted", entryJSON(specialJSON("root"), "read"))), &policy.ResolveOptions{CommandCwd: "/"})
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		res := runPolicyB(b, l, p)
		if res != 0 {
			b.Fatalf("exit %d", res)
		}
	}
}
