package main

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestServe_PrependPathDirs: `serve --prepend-path-dir DIR` advertises the directory as
// environmentInfo.prependPathDirs, placed after platformOs as the reference places its
// codex-path directory; without the flag the member is absent (as for a reference binary
// outside its package); a relative or missing directory is refused at start-up.
func TestServe_PrependPathDirs(t *testing.T) {
	ours := oursBinary(t)
	dir := t.TempDir()
	tools := filepath.Join(dir, "tools")
	if err := os.Mkdir(tools, 0o755); err != nil {
		t.Fatal(err)
	}
	initialize := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(ours, append([]string{"serve", "--listen", "stdio"}, args...)...)
		in, err := cmd.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// stdin stays open until the answer is read: EOF shuts a stdio server down at
		// once, before it answers (the reference too).
		_, _ = io.WriteString(in, `{"id":1,"method":"initialize","params":{"clientName":"t"}}`+"\n")
		line, err := bufio.NewReader(out).ReadString('\n')
		in.Close()
		_, _ = io.Copy(io.Discard, out)
		_ = cmd.Wait()
		if err != nil {
			t.Fatalf("serve %q: no initialize result: %v", args, err)
		}
		return line
	}
	got := initialize("--prepend-path-dir", tools)
	var res struct {
		Result struct {
			EnvironmentInfo struct {
				PrependPathDirs []string `json:"prependPathDirs"`
			} `json:"environmentInfo"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(got), &res); err != nil {
		t.Fatalf("initialize result %q: %v", got, err)
	}
	if want := "file://" + tools; len(res.Result.EnvironmentInfo.PrependPathDirs) != 1 || res.Result.EnvironmentInfo.PrependPathDirs[0] != want {
		t.Fatalf("prependPathDirs = %q, want [%q]", res.Result.EnvironmentInfo.PrependPathDirs, want)
	}
	if p, t2 := strings.Index(got, `"platformOs"`), strings.Index(got, `"prependPathDirs"`); !(p >= 0 && p < t2 && t2 < strings.Index(got, `"temporaryDirectories"`)) {
		t.Errorf("prependPathDirs is not between platformOs and temporaryDirectories: %s", got)
	}
	if got := initialize(); strings.Contains(got, "prependPathDirs") {
		t.Errorf("without the flag the member should be absent: %s", got)
	}
	for _, bad := range []string{"relative/dir", filepath.Join(dir, "missing")} {
		out, err := exec.Command(ours, "serve", "--listen", "stdio", "--prepend-path-dir", bad).CombinedOutput()
		if err == nil || !strings.Contains(string(out), "--prepend-path-dir") {
			t.Errorf("--prepend-path-dir %s: %v, %q; want a start-up error naming the flag", bad, err, out)
		}
	}
}
