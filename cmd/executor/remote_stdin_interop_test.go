package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/execlab/executor/internal/refbin"
	"github.com/execlab/executor/internal/syncbuf"
)

// Differential tests of the stdin credential modes: each released reference
// (`codex exec-server --remote …`, found by internal/refbin: fails under CI=true when
// missing) and our binary get the same stdin script against the same kind of loopback fake
// registry (newFakeRegistry: register OK, upgrade 401, so both re-register about once a
// second). Compared: exit status, the "Error: …" line, and the sequence of distinct
// authorization headers the registry saw. Subtests <case>/<release>: ours runs once per
// case and is compared with every release.

var (
	oursOnce sync.Once
	oursBin  string
	oursErr  error
)

func oursBinary(t *testing.T) string {
	t.Helper()
	oursOnce.Do(func() {
		dir, err := os.MkdirTemp("", "executor-stdin-interop-")
		if err != nil {
			oursErr = err
			return
		}
		oursBin, oursErr = refbin.BuildExecutor(dir)
	})
	if oursErr != nil {
		t.Fatalf("building executor: %v", oursErr)
	}
	return oursBin
}

// stdinRun is one binary under a stdin script.
type stdinRun struct {
	t      *testing.T
	reg    *fakeRegistry
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stderr *syncbuf.Buffer
	done   chan struct{}
	auths  []string // distinct consecutive authorization values seen so far
}

// lockedBuffer collects a child's output while the test reads it.
type lockedBuffer = refbin.LockedBuffer

// startStdinRun starts reference binary refBin, or ours when refBin is "".
func startStdinRun(t *testing.T, refBin string, env []string, args ...string) *stdinRun {
	t.Helper()
	reg := newFakeRegistry(t)
	var cmd *exec.Cmd
	if refBin != "" {
		cmd = exec.Command(refBin, append([]string{"exec-server", "--remote", reg.srv.URL, "--environment-id", "env-1"}, args...)...)
	} else {
		cmd = exec.Command(oursBinary(t), append([]string{"remote", "--registry", reg.srv.URL, "--environment-id", "env-1"}, args...)...)
	}
	home := refbin.CodexHome(t)
	cmd.Env = append([]string{"PATH=/usr/bin:/bin", "HOME=" + home, "CODEX_HOME=" + home, "RUST_BACKTRACE=0", "RUST_LOG=error"}, env...)
	r := &stdinRun{t: t, reg: reg, cmd: cmd, stderr: &syncbuf.Buffer{}, done: make(chan struct{})}
	cmd.Stderr = r.stderr
	var err error
	if r.stdin, err = cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = cmd.Wait(); close(r.done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-r.done
	})
	return r
}

func (r *stdinRun) send(line string) {
	r.t.Helper()
	if _, err := io.WriteString(r.stdin, line); err != nil {
		r.t.Fatalf("writing stdin: %v", err)
	}
}

// waitAuth waits for a register carrying want (earlier values may still arrive first).
func (r *stdinRun) waitAuth(want string) {
	r.t.Helper()
	for {
		got := r.next()
		if got == want {
			return
		}
	}
}

func (r *stdinRun) next() string {
	r.t.Helper()
	select {
	case a := <-r.reg.auths:
		if len(r.auths) == 0 || r.auths[len(r.auths)-1] != a {
			r.auths = append(r.auths, a)
		}
		return a
	case <-r.done:
		r.t.Fatalf("process exited while a register was awaited; stderr: %q", lastLines(r.stderr.String()))
	case <-time.After(eventTimeout):
		r.t.Fatal("no register request")
	}
	return ""
}

// running asserts the process has not exited.
func (r *stdinRun) running() {
	r.t.Helper()
	select {
	case <-r.done:
		r.t.Fatalf("process exited, want it running; stderr: %q", lastLines(r.stderr.String()))
	default:
	}
}

type stdinResult struct {
	exit    int
	errLine string
	auths   []string
}

func (r *stdinRun) finish() stdinResult {
	r.t.Helper()
	select {
	case <-r.done:
	case <-time.After(eventTimeout):
		r.t.Fatalf("process did not exit; stderr: %q", lastLines(r.stderr.String()))
	}
	for {
		select { // collect the registers that raced with the exit
		case a := <-r.reg.auths:
			if len(r.auths) == 0 || r.auths[len(r.auths)-1] != a {
				r.auths = append(r.auths, a)
			}
			continue
		default:
		}
		break
	}
	res := stdinResult{exit: r.cmd.ProcessState.ExitCode(), auths: r.auths}
	if ws, ok := r.cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		res.exit = -int(ws.Signal())
	}
	sc := bufio.NewScanner(strings.NewReader(r.stderr.String()))
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "Error: ") {
			res.errLine = sc.Text()
			break
		}
	}
	return res
}

func lastLines(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > 3 {
		lines = lines[len(lines)-3:]
	}
	return strings.Join(lines, "\n")
}

func frameFor(token, env string, expiresAt int64) string {
	return fmt.Sprintf(`{"version":1,"token":%q,"environment_id":%q,"expires_at":%d}`+"\n", token, env, expiresAt)
}

func TestRemoteStdinInterop(t *testing.T) {
	refbin.Releases(t) // fails under CI=true when one is missing, skips elsewhere when none is there
	hour := time.Now().Unix() + 3600
	cred := []string{"--executor-credential-stdin"}
	tests := []struct {
		name      string
		env       []string
		args      []string
		script    func(r *stdinRun)
		want      stdinResult
		usageOnly bool // clap's usage texts differ from ours; compare the status only
	}{
		{"credential rotation then EOF", nil, cred, func(r *stdinRun) {
			r.send(frameFor("tok-A", "env-1", hour))
			r.waitAuth("Bearer tok-A")
			r.send(frameFor("tok-B", "env-1", hour))
			r.waitAuth("Bearer tok-B")
			r.stdin.Close()
		}, stdinResult{0, "", []string{"Bearer tok-A", "Bearer tok-B"}}, false},
		{"credential bad frame after start", nil, cred, func(r *stdinRun) {
			r.send(frameFor("tok-A", "env-1", hour))
			r.waitAuth("Bearer tok-A")
			r.send("{}\n")
		}, stdinResult{1, "Error: invalid exec-server executor credential frame", []string{"Bearer tok-A"}}, false},
		{"credential invalid first frame", nil, cred, func(r *stdinRun) { r.send("{}\n") },
			stdinResult{1, "Error: invalid exec-server executor credential frame", nil}, false},
		{"credential unknown member", nil, cred, func(r *stdinRun) {
			r.send(`{"version":1,"token":"t","environment_id":"env-1","expires_at":99999999999,"x":1}` + "\n")
		}, stdinResult{1, "Error: invalid exec-server executor credential frame", nil}, false},
		{"credential array form", nil, cred, func(r *stdinRun) {
			r.send(fmt.Sprintf(`[1,"env-1","tok-arr",%d]`+"\n", hour))
			r.waitAuth("Bearer tok-arr")
			r.stdin.Close()
		}, stdinResult{0, "", []string{"Bearer tok-arr"}}, false},
		{"credential EOF without frame", nil, cred, func(r *stdinRun) { r.stdin.Close() },
			stdinResult{1, "Error: exec-server executor credential pipe closed", nil}, false},
		{"credential partial line at EOF", nil, cred, func(r *stdinRun) {
			r.send(strings.TrimSuffix(frameFor("tok-A", "env-1", hour), "\n"))
			r.stdin.Close()
		}, stdinResult{1, "Error: invalid exec-server executor credential frame", nil}, false},
		{"credential other environment", nil, cred, func(r *stdinRun) { r.send(frameFor("tok", "env-2", hour)) },
			stdinResult{1, "Error: exec-server executor credential is for a different environment", nil}, false},
		{"credential expired", nil, cred, func(r *stdinRun) { r.send(frameFor("tok", "env-1", 1000)) },
			stdinResult{1, "Error: exec-server executor credential is expired", nil}, false},
		{"credential padded token", nil, cred, func(r *stdinRun) { r.send(frameFor(" tok ", "env-1", hour)) },
			stdinResult{1, "Error: invalid exec-server executor credential frame", nil}, false},
		{"credential line over the limit", nil, cred, func(r *stdinRun) { r.send(strings.Repeat("a", 20000)) },
			stdinResult{1, "Error: exec-server executor credential frame exceeds the size limit", nil}, false},
		{"credential expires while running", nil, cred, func(r *stdinRun) {
			r.send(frameFor("tok-E", "env-1", time.Now().Unix()+3))
			r.waitAuth("Bearer tok-E")
		}, stdinResult{1, "Error: environment registry authentication error: failed to resolve environment registry authentication: request auth build error: exec-server executor credential is expired",
			[]string{"Bearer tok-E"}}, false},
		{"bearer with exit-on-stdin-close", nil, []string{"--registration-bearer-stdin", "--exit-on-stdin-close"}, func(r *stdinRun) {
			r.send("tok-line\n")
			r.waitAuth("Bearer tok-line")
			r.stdin.Close()
		}, stdinResult{0, "", []string{"Bearer tok-line"}}, false},
		{"bearer with exit env true", []string{"CODEX_EXEC_SERVER_EXIT_ON_STDIN_CLOSE=true"}, []string{"--registration-bearer-stdin"}, func(r *stdinRun) {
			r.send("tok-line\n")
			r.waitAuth("Bearer tok-line")
			r.stdin.Close()
		}, stdinResult{0, "", []string{"Bearer tok-line"}}, false},
		{"bearer EOF ignored without the flag", nil, []string{"--registration-bearer-stdin"}, func(r *stdinRun) {
			r.send("tok-line\n")
			r.waitAuth("Bearer tok-line")
			r.stdin.Close()
			r.next()
			r.next()
			r.running()
			_ = r.cmd.Process.Signal(syscall.SIGTERM)
		}, stdinResult{0, "", []string{"Bearer tok-line"}}, false},
		{"bearer and credential", nil, []string{"--registration-bearer-stdin", "--executor-credential-stdin"}, func(*stdinRun) {},
			stdinResult{exit: 2}, true},
		{"chatgpt and credential", nil, []string{"--chatgpt-token-stdin", "--executor-credential-stdin"}, func(*stdinRun) {},
			stdinResult{exit: 2}, true},
		{"exit env not boolean", []string{"CODEX_EXEC_SERVER_EXIT_ON_STDIN_CLOSE=1", "CODEX_API_KEY=sk-test"}, nil, func(*stdinRun) {},
			stdinResult{exit: 2}, true},
	}
	// EOF after start-up races the reference's periodic re-register (about once a
	// second here): when a re-register builds its auth after the pipe closed, the
	// reference exits 1 with this line instead of 0 (observed both ways for the same script).
	// Ours always exits 0; for these scenarios either reference outcome is accepted and
	// ours is held to the documented one.
	const pipeClosedRace = "Error: environment registry authentication error: failed to resolve environment registry " +
		"authentication: request auth build error: exec-server executor credential pipe closed"
	racyEOF := map[string]bool{"credential rotation then EOF": true, "credential array form": true}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := startStdinRun(t, "", tt.env, tt.args...)
			tt.script(r)
			ours := r.finish()
			for _, a := range ours.auths {
				if strings.Contains(ours.errLine, strings.TrimPrefix(a, "Bearer ")) {
					t.Errorf("error line %q leaks the credential", ours.errLine)
				}
			}
			if tt.usageOnly {
				ours.errLine = ""
			}
			refbin.ForEachRelease(t, func(t *testing.T, rel refbin.Release) {
				r := startStdinRun(t, rel.Path, tt.env, tt.args...)
				tt.script(r)
				ref := r.finish()
				if racyEOF[tt.name] && ref.exit == 1 && ref.errLine == pipeClosedRace {
					t.Logf("the reference lost the EOF/re-register race (%+v); comparing ours with %+v", ref, tt.want)
					ref.exit, ref.errLine = tt.want.exit, tt.want.errLine
				}
				if tt.usageOnly {
					ref.errLine = ""
				}
				if !sameResult(ref, tt.want) {
					t.Errorf("reference %s: got %+v, want %+v (expectation out of date?)", rel.Version, ref, tt.want)
				}
				if !sameResult(ours, ref) {
					t.Errorf("ours: got %+v, want reference %s's %+v", ours, rel.Version, ref)
				}
			})
		})
	}
}

func sameResult(a, b stdinResult) bool {
	if a.exit != b.exit || a.errLine != b.errLine || len(a.auths) != len(b.auths) {
		return false
	}
	for i := range a.auths {
		if a.auths[i] != b.auths[i] {
			return false
		}
	}
	return true
}
