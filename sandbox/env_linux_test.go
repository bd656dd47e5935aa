package sandbox_test

import (
	"bytes"
	"context"
	"errors"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/execlab/executor/sandbox"
	"github.com/execlab/executor/sandbox/sandboxtest"
)

// Fail closed: a stage started with the encoded command environment (the marker) whose
// own environment also holds a variable the loader or libc honours refuses to launch,
// naming the variable but not its value: the launcher stage (plain, supervised bwrap)
// and the inner stage (bwrap started directly passes its environment on).
func TestStage_RefusesUnsanitizedEnvironment(t *testing.T) {
	l := sandbox.NewLauncher(sandboxtest.Require(t, sandbox.BackendBubblewrap), nil)
	w := t.TempDir()
	rootRead := entryJSON(specialJSON("root"), "read")
	tests := []struct{ name, ctx, backend string }{
		{"bwrap direct (inner stage refuses)", managedCtx("restricted", rootRead), sandbox.BackendBubblewrap},
		{"bwrap supervised (launcher refuses)", managedCtx("restricted", rootRead, entryJSON(pathJSON(w), "write")), sandbox.BackendBubblewrap},
		{"plain", managedCtx("restricted", entryJSON(specialJSON("root"), "write")), "plain"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := resolveFor(t, tt.ctx, w, "", l)
			cmd, err := l.Wrap(&sandbox.Request{Policy: p, Argv: []string{"sh", "-c", "echo ran"}, Cwd: w, Env: baseEnv()})
			if err != nil {
				t.Fatalf("wrapping: %v", err)
			}
			if cmd.Backend != tt.backend {
				t.Fatalf("backend %q, want %q", cmd.Backend, tt.backend)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			c := exec.CommandContext(ctx, cmd.Path)
			c.Args, c.Dir = cmd.Args, cmd.Dir
			c.Env = append(append([]string(nil), cmd.Env...), "GCONV_PATH=/secret-value")
			var o, e bytes.Buffer
			c.Stdout, c.Stderr = &o, &e
			err = c.Run()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 1 || o.Len() != 0 ||
				!strings.Contains(e.String(), "refusing to launch") || !strings.Contains(e.String(), "GCONV_PATH") ||
				strings.Contains(e.String(), "secret-value") {
				t.Errorf("got %v, stdout %q, stderr %q; want exit 1 naming GCONV_PATH (not its value), nothing run", err, o.String(), e.String())
			}
		})
	}
}
