package sandbox_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/execlab/executor/sandbox"
	"github.com/execlab/executor/sandbox/policy"
)

func TestProbe_ReportsLayers(t *testing.T) {
	r := hostReport()
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
	l := sandbox.NewLauncher(hostReport(), nil)
	cmd, err := l.Wrap(&sandbox.Request{Argv: []string{"true"}, Cwd: "/"})
	if cmd != nil || err != nil {
		t.Errorf("no intent: got (%v, %v), want (nil, nil)", cmd, err)
	}
	_, err = l.Wrap(&sandbox.Request{EnforceManagedNetwork: true, Argv: []string{"true"}, Cwd: "/"})
	var pe *policy.Error
	if !errors.As(err, &pe) || pe.Code != policy.CodeInvalidParams {
		t.Errorf("managed without sandbox (deviation): got %v, want -32602 refusal", err)
	}
	gone := sandbox.NewLauncher(hostReport(), &sandbox.Options{Executable: "/nonexistent/executor"})
	_, err = gone.Wrap(&sandbox.Request{Policy: &policy.Policy{Cwd: "/"}, Argv: []string{"true"}, Cwd: "/"})
	if !errors.As(err, &pe) || pe.Code != policy.CodeInternal || pe.Message != "sandbox runtime paths are not configured" {
		t.Errorf("deleted executor: got %v, want -32603", err)
	}
}

// BenchmarkSandboxedTrue measures a one-shot sandboxed /bin/true through bubblewrap.
func BenchmarkSandboxedTrue(b *testing.B) {
	r := hostReport()
	if r.Backend != sandbox.BackendBubblewrap {
		b.Skip("bubblewrap unavailable")
	}
	l := sandbox.NewLauncher(r, nil)
	t := &testing.T{}
	p, err := policy.Resolve(decodeCtx(t, managedCtx("restricted", entryJSON(specialJSON("root"), "read"))), &policy.ResolveOptions{CommandCwd: "/"})
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
