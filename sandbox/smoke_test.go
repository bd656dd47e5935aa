package sandbox_test

import (
	"testing"

	"github.com/execlab/executor/sandbox"
)

func TestSmoke(t *testing.T) {
	r := requireBwrap(t)
	t.Log(r.LogLine())
	l := sandbox.NewLauncher(r, nil)
	res := runSandboxed(t, l, managedCtx("restricted", entryJSON(specialJSON("root"), "read")), "/", baseEnv(),
		"sh", "-c", "echo hi; cat /proc/self/status | grep -E 'NoNewPrivs|Seccomp:|CapEff'; touch /x")
	t.Logf("code=%d stdout=%q stderr=%q args=%q", res.code, res.stdout, res.stderr, res.cmd.Args)
}
