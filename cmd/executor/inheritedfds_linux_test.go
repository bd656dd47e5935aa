package main

import (
	"bufio"
	"os"
	"os/exec"
	"strings"
	"testing"
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
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		_ = cmd.Wait()
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("executor serve printed no URL: %v", err)
	}
	url := strings.TrimSpace(line)
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
