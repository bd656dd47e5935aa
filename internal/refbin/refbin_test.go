package refbin

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestVersions_MatchInstallScript: scripts/install-reference.sh --list and Versions name
// the same releases in the same order (newest first).
func TestVersions_MatchInstallScript(t *testing.T) {
	cmd := exec.Command(filepath.Join(RepoRoot(), "scripts", "install-reference.sh"), "--list")
	cmd.Env = append(os.Environ(), "REFERENCE_CODEX_VERSIONS=") // the script's own default
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("install-reference.sh --list: %v", err)
	}
	if got := strings.Fields(string(out)); !slices.Equal(got, Versions) {
		t.Errorf("install-reference.sh --list: got %q, want Versions %q", got, Versions)
	}
	if Newest != Versions[0] {
		t.Errorf("Newest is %q, want Versions[0] %q", Newest, Versions[0])
	}
}

// TestBinaryVersion_Parses runs fake binaries printing good and bad --version lines.
func TestBinaryVersion_Parses(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		out, want string
		ok        bool
	}{
		{"codex-cli 0.171.0", "0.171.0", true},
		{"codex-cli 0.169.0\n", "0.169.0", true},
		{"codex 0.171.0", "", false},
		{"", "", false},
	}
	for i, c := range cases {
		bin := filepath.Join(dir, "codex"+string(rune('a'+i)))
		script := "#!/bin/sh\nprintf '%s' '" + c.out + "'\n"
		if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
		got, err := BinaryVersion(bin)
		if (err == nil) != c.ok || got != c.want {
			t.Errorf("--version printing %q: got %q, %v; want %q (ok %v)", c.out, got, err, c.want, c.ok)
		}
	}
	if _, err := BinaryVersion(filepath.Join(dir, "missing")); err == nil {
		t.Error("missing binary: got no error")
	}
}

// TestRecord_AppendsLines: outcomes land in $EXECUTOR_TEST_SUMMARY as tab-separated lines,
// with tabs and newlines inside fields flattened.
func TestRecord_AppendsLines(t *testing.T) {
	path := filepath.Join(t.TempDir(), "summary")
	t.Setenv("EXECUTOR_TEST_SUMMARY", path)
	Record("test/x", "0.171.0", "TestA", "passed", "")
	Record("test/x", "0.169.0", "TestA", "skipped", "why\tnot\nhere")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want := "test/x\t0.171.0\tTestA\tpassed\t\ntest/x\t0.169.0\tTestA\tskipped\twhy not here\n"
	if string(b) != want {
		t.Errorf("summary file: got %q, want %q", b, want)
	}
}
