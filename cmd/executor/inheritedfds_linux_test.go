package main

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/execlab/executor/internal/refbin"
)

// TestServe_InheritedDescriptorsStayOut: a descriptor `executor serve` inherited without
// close-on-exec (here fd 3, as a shell or supervisor may leave one) does not reach the
// commands it runs, as with the reference; before, every child got it.
func TestServe_InheritedDescriptorsStayOut(t *testing.T) {
	ours := oursBinary(t)
	f, err := os.CreateTemp(t.TempDir(), "inherited-")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cmd := exec.Command(ours, "serve", "--listen", "ws://127.0.0.1:0")
	cmd.ExtraFiles = []*os.File{f} // fd 3 in serve, without close-on-exec
	url := refbin.Launch(t, cmd, &refbin.LaunchOptions{Name: "executor serve"}).URL()
	// The shell lists what its own descriptors point to (not ls's, which holds its
	// directory open).
	out, err := exec.Command(ours, "exec", "--url", url, "--", "sh", "-c",
		`for f in /proc/$$/fd/*; do echo "${f##*/} $(readlink "$f")"; done`).CombinedOutput()
	if err != nil {
		t.Fatalf("exec: %v\n%s", err, out)
	}
	if strings.Contains(string(out), f.Name()) {
		t.Fatalf("the command's descriptors:\n%s\ninclude %s, which serve inherited as fd 3", out, f.Name())
	}
	if !strings.Contains(string(out), "0 ") || !strings.Contains(string(out), "2 ") {
		t.Fatalf("descriptor listing %q lacks 0..2", out)
	}
}
