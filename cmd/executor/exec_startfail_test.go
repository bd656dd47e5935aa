package main

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
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

// TestExec_RegistryRefusedFailsFast: a first connection refused by the registry address (a
// typo in the port) ends `executor exec` with 255 at once, as ssh does, instead of waiting
// out the 25 s window meant for an environment that is offline (issue 30).
func TestExec_RegistryRefusedFailsFast(t *testing.T) {
	ours := oursBinary(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now: connections are refused
	tokenFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenFile, []byte("harness-token\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	cmd := exec.Command(ours, "exec", "--registry", "http://"+addr, "--environment-id", "env-1",
		"--token-file", tokenFile, "--", "true")
	out, err := cmd.CombinedOutput()
	elapsed := time.Since(start)
	ee, ok := err.(*exec.ExitError)
	if !ok || ee.ExitCode() != 255 {
		t.Fatalf("exec: %v (%q), want exit 255", err, out)
	}
	if !strings.Contains(string(out), "connection refused") {
		t.Errorf("exec output %q, want it to say the connection was refused", out)
	}
	// 25 s before; the bound leaves room for a loaded machine and the binary's start-up.
	if elapsed > 10*time.Second {
		t.Errorf("exec took %v to fail, want it to fail at once (well under 10 s)", elapsed)
	}
}
