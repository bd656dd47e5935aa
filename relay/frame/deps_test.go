package frame_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestDeps_NoForbiddenImports enforces the relay layer's dependency rule from ../shared/STYLE.md: relay/*
// imports none of noise, executor, registry, sandbox, encoding/json or a websocket library
// (only relay/wsconn may import coder/websocket).
func TestDeps_NoForbiddenImports(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "github.com/execlab/executor/relay", "github.com/execlab/executor/relay/frame").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	forbidden := []string{
		"encoding/json",
		"github.com/coder/websocket",
		"github.com/execlab/executor/noise",
		"github.com/execlab/executor/executor",
		"github.com/execlab/executor/registry",
		"github.com/execlab/executor/sandbox",
	}
	for _, dep := range strings.Fields(string(out)) {
		for _, bad := range forbidden {
			if dep == bad || strings.HasPrefix(dep, bad+"/") {
				t.Errorf("relay/frame depends on %s, which the relay layer must not import", dep)
			}
		}
	}
}
