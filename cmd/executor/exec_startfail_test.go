package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestExec_StartFailureExitCodes: `executor exec` exits as a shell would when the remote
// program cannot be started — 127 not found, 126 not executable — from error.data.kind
// (codex 0.171.0), and prints the executor's error.
func TestExec_StartFailureExitCodes(t *testing.T) {
	ours := oursBinary(t)
	url := startOursServe(t, ours)
	for _, tt := range []struct {
		argv []string
		code int
		text string
	}{
		{[]string{"no-such-program-zz"}, 127, "No such file or directory"},
		{[]string{"/etc"}, 126, "Permission denied"},
		{[]string{"sh", "-c", "exit 3"}, 3, ""},
	} {
		cmd := exec.Command(ours, append([]string{"exec", "--url", url, "--"}, tt.argv...)...)
		out, err := cmd.CombinedOutput()
		ee, ok := err.(*exec.ExitError)
		if !ok || ee.ExitCode() != tt.code {
			t.Errorf("exec %q: %v (%q), want exit %d", tt.argv, err, out, tt.code)
		}
		if !strings.Contains(string(out), tt.text) {
			t.Errorf("exec %q: output %q, want %q", tt.argv, out, tt.text)
		}
	}
}
