package fs_test

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/execlab/executor/executor/fs"
	"github.com/execlab/executor/executor/protocol"
	"github.com/execlab/executor/jsonwire"
	"github.com/execlab/executor/sandbox"
	"github.com/execlab/executor/sandbox/policy"
	"github.com/execlab/executor/sandbox/sandboxtest"
)

// launchSandboxed runs argv once under c through l, as process/start does, and
// returns its exit code and its output (stdout, then stderr).
func launchSandboxed(t *testing.T, l *sandbox.Launcher, c *policy.Context, cwd string, argv ...string) (int, string) {
	t.Helper()
	p, err := policy.Resolve(c, &policy.ResolveOptions{CommandCwd: cwd, RuntimeReadGrants: []string{l.Executable()}})
	if err != nil {
		t.Fatalf("resolving: %v", err)
	}
	r := sandboxtest.Run(t, l, &sandbox.Request{Policy: p, Argv: argv, Cwd: cwd, Env: []string{"PATH=/usr/bin:/bin"}})
	return r.Code, r.Stdout + r.Stderr
}

// Issue 26 finding 2 through fs/writeFile (the sandboxed helper runs under the same
// policy). A sandboxed command with the same policy cannot swap the nested project
// (EBUSY), and fs/writeFile into the project lands in the real project. After a swap
// by a command with only the enclosing root writable, fs/writeFile fails with the
// clear refusal. Nothing lands in OUT; before the fix the helper had OUT bound
// writable and the write landed there.
func TestSandboxedHelper_NestedRootSwappedForSymlink(t *testing.T) {
	l := sandboxtest.Launcher(t, sandbox.BackendBubblewrap)
	s := fs.New(&fs.Options{Sandbox: l})
	a, proj, out := sandboxtest.NestedRoots(t)
	sb := sandboxtest.NestedWorkspace(t, a, proj)
	enclosing := sandboxtest.EnclosingOnly(t, a)
	data := base64.StdEncoding.EncodeToString([]byte("pwned"))
	const swap = `mv x x.old && mkdir x && ln -s "$1" x/proj`

	if code, output := launchSandboxed(t, l, sb, a, "sh", "-c", swap, "sh", out); code == 0 || !strings.Contains(output, "Device or resource busy") {
		t.Errorf("swap under the same policy: exit %d output %q, want mv to fail EBUSY", code, output)
	}
	_, err := s.WriteFile(ctx, &protocol.FsWriteFileParams{Path: uri(filepath.Join(proj, "ok")), DataBase64: data, Sandbox: sb})
	if names, rerr := os.ReadDir(out); rerr != nil || len(names) > 0 {
		t.Fatalf("OUT %s holds %v (%v) after the same-policy swap: want it empty", out, names, rerr)
	}
	if err != nil {
		t.Fatalf("writeFile into the nested project: %v", err)
	}
	if _, err := os.Stat(filepath.Join(proj, "ok")); err != nil {
		t.Fatalf("the write did not land in the project: %v", err)
	}

	if code, output := launchSandboxed(t, l, enclosing, a, "sh", "-c", swap, "sh", out); code != 0 {
		t.Fatalf("swap under the enclosing root's policy: exit %d output %q", code, output)
	}
	_, err = s.WriteFile(ctx, &protocol.FsWriteFileParams{Path: uri(filepath.Join(proj, "f")), DataBase64: data, Sandbox: sb})
	wantErr(t, "writeFile after the swap", err, jsonwire.CodeInternal,
		"~cannot enforce sandbox writable root "+proj+" because it crosses writable symlink "+proj)
	_, err = s.WriteFile(ctx, &protocol.FsWriteFileParams{Path: uri(filepath.Join(out, "direct")), DataBase64: data, Sandbox: sb})
	wantErr(t, "writeFile into OUT after the swap", err, jsonwire.CodeInternal, "~cannot enforce sandbox writable root")
	if names, err := os.ReadDir(out); err != nil || len(names) > 0 {
		t.Fatalf("OUT %s holds %v (%v): want it empty", out, names, err)
	}
}

// fs/writeFile while a swap races the helper's launch: A/x (the real project) and A/y
// (proj -> OUT) are exchanged continuously during N bounded writes. Each write lands
// in the real project or fails closed; nothing ever lands in OUT.
func TestSandboxedHelper_NestedRootSwapRacingLaunch(t *testing.T) {
	l := sandboxtest.Launcher(t, sandbox.BackendBubblewrap)
	s := fs.New(&fs.Options{Sandbox: l})
	a, proj, out := sandboxtest.NestedRoots(t)
	x, y := filepath.Join(a, "x"), filepath.Join(a, "y")
	if err := os.MkdirAll(y, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(out, filepath.Join(y, "proj")); err != nil {
		t.Fatal(err)
	}
	sb := sandboxtest.NestedWorkspace(t, a, proj)
	data := base64.StdEncoding.EncodeToString([]byte("pwned"))

	const writes = 12
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // the attacker; stopped and waited for below
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			unix.Renameat2(unix.AT_FDCWD, x, unix.AT_FDCWD, y, unix.RENAME_EXCHANGE)
			time.Sleep(200 * time.Microsecond)
		}
	}()
	ok, failed := 0, 0
	deadline := time.Now().Add(90 * time.Second)
	for i := 0; i < writes && time.Now().Before(deadline); i++ {
		_, err := s.WriteFile(ctx, &protocol.FsWriteFileParams{Path: uri(filepath.Join(proj, "f"+strconv.Itoa(i))), DataBase64: data, Sandbox: sb})
		if err != nil {
			if failed == 0 {
				t.Logf("write %d failed closed: %v", i, err)
			}
			failed++
		} else {
			ok++
		}
	}
	close(stop)
	wg.Wait()
	t.Logf("writes: %d ok, %d failed closed", ok, failed)
	if names, err := os.ReadDir(out); err != nil || len(names) > 0 {
		t.Fatalf("OUT %s holds %v (%v): want it empty", out, names, err)
	}
}
