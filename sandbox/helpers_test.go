package sandbox_test

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/execlab/executor/sandbox"
	"github.com/execlab/executor/sandbox/policy"
	"github.com/execlab/executor/sandbox/sandboxtest"
)

type result struct {
	stdout, stderr string
	code           int
	cmd            *sandbox.Command
}

// resolveFor resolves ctxJSON as executor/process does for a process/start in cwd with
// TMPDIR tmpDir: the launcher's executable is a runtime read grant.
func resolveFor(t *testing.T, ctxJSON, cwd, tmpDir string, l *sandbox.Launcher) *policy.Policy {
	t.Helper()
	p, err := policy.Resolve(sandboxtest.Context(t, ctxJSON), &policy.ResolveOptions{CommandCwd: cwd, TmpDir: tmpDir,
		RuntimeReadGrants: []string{l.Executable()}})
	if err != nil {
		t.Fatalf("resolving: %v", err)
	}
	return p
}

// runSandboxed resolves ctxJSON for a process/start and runs argv through the launcher.
func runSandboxed(t *testing.T, l *sandbox.Launcher, ctxJSON string, cwd string, env []string, argv ...string) result {
	t.Helper()
	return runPolicy(t, l, resolveFor(t, ctxJSON, cwd, envValue(env, "TMPDIR"), l), cwd, env, nil, argv...)
}

func runPolicy(t *testing.T, l *sandbox.Launcher, p *policy.Policy, cwd string, env []string, arg0 *string, argv ...string) result {
	t.Helper()
	return runRequest(t, l, &sandbox.Request{Policy: p, Argv: argv, Cwd: cwd, Env: env, Arg0: arg0})
}

// runRequest wraps req and runs it to completion (sandboxtest.Run).
func runRequest(t *testing.T, l *sandbox.Launcher, req *sandbox.Request) result {
	t.Helper()
	r := sandboxtest.Run(t, l, req)
	return result{stdout: r.Stdout, stderr: r.Stderr, code: r.Code, cmd: r.Cmd}
}

// gitWorkTree makes dir look like a git work tree (.git/HEAD holding "ref\n"), the
// metadata the profiles keep read-only.
func gitWorkTree(t *testing.T, dir string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(dir, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".git", "HEAD"), []byte("ref\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

func envValue(env []string, key string) string {
	for _, kv := range env {
		if len(kv) > len(key) && kv[:len(key)] == key && kv[len(key)] == '=' {
			return kv[len(key)+1:]
		}
	}
	return ""
}

func baseEnv() []string { return []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=/root"} }

func fileURI(p string) string { return policy.FromNative(p).String() }

func entryJSON(pathJSON, access string) string {
	return `{"path":` + pathJSON + `,"access":"` + access + `"}`
}
func specialJSON(kind string) string { return `{"type":"special","value":{"kind":"` + kind + `"}}` }
func pathJSON(p string) string       { return `{"type":"path","path":"` + fileURI(p) + `"}` }
func globJSON(p string) string       { return `{"type":"glob_pattern","pattern":"` + p + `"}` }

func managedCtx(network string, entries ...string) string {
	joined := ""
	for i, e := range entries {
		if i > 0 {
			joined += ","
		}
		joined += e
	}
	return `{"permissions":{"type":"managed","network":"` + network + `","file_system":{"type":"restricted","entries":[` +
		joined + `]}},"windowsSandboxLevel":"disabled"}`
}

func runRaw(t *testing.T, bin string, args []string) result {
	t.Helper()
	c := exec.Command(bin, args...)
	c.Env = baseEnv()
	var o, e bytes.Buffer
	c.Stdout, c.Stderr = &o, &e
	err := c.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("running %s: %v", bin, err)
	}
	return result{stdout: o.String(), stderr: e.String(), code: code}
}

func runPolicyB(b *testing.B, l *sandbox.Launcher, p *policy.Policy) int {
	cmd, err := l.Wrap(&sandbox.Request{Policy: p, Argv: []string{"/bin/true"}, Cwd: "/", Env: baseEnv()})
	if err != nil {
		b.Fatal(err)
	}
	c := exec.Command(cmd.Path)
	c.Args, c.Env, c.Dir = cmd.Args, cmd.Env, cmd.Dir
	if err := c.Run(); err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode()
		}
		b.Fatal(err)
	}
	return 0
}
