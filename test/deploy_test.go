package test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestSystemdUnits_Verify runs `systemd-analyze verify` on every unit of deploy/systemd
// (the template as an instance), with ExecStart pointed at an executable that exists here,
// and fails on any diagnostic (verify exits 0 on unknown keys but reports them). The
// registry unit must also keep its hardening: `systemd-analyze security --offline`
// exposure at most 2.0.
func TestSystemdUnits_Verify(t *testing.T) {
	if _, err := exec.LookPath("systemd-analyze"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("systemd-analyze is required under CI=true (.ci/run installs systemd)")
		}
		t.Skip("systemd-analyze not installed")
	}
	units, err := filepath.Glob(filepath.Join("..", "deploy", "systemd", "*.service"))
	if err != nil || len(units) == 0 {
		t.Fatalf("no units under deploy/systemd (%v)", err)
	}
	exe, err := exec.LookPath("true")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, u := range units {
		b, err := os.ReadFile(u)
		if err != nil {
			t.Fatal(err)
		}
		name := filepath.Base(u)
		if !strings.Contains(string(b), "ExecStart=/usr/local/bin/executor ") {
			t.Errorf("%s: ExecStart is not /usr/local/bin/executor", name)
		}
		text := strings.ReplaceAll(string(b), "/usr/local/bin/executor", exe)
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		unit := strings.Replace(name, "@.service", "@ci-env.service", 1)
		cmd := exec.Command("systemd-analyze", "verify", unit)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err != nil || strings.TrimSpace(string(out)) != "" {
			t.Errorf("systemd-analyze verify %s: %v\n%s", unit, err, out)
		}
	}
	cmd := exec.Command("systemd-analyze", "security", "--offline=yes", "--threshold=20", "executor-registry.service")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("systemd-analyze security: registry unit exposure above 2.0 or not assessed: %v\n%s", err, out)
	}
}
