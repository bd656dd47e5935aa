package sandbox_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/execlab/executor/sandbox"
	"github.com/execlab/executor/sandbox/sandboxtest"
)

// inProcessFlag is the test binary's in-process inner-stage command (TestMain).
const inProcessFlag = "--sandbox-test-in-process"

// inProcessState is what inProcessProbe reports from inside the sandbox.
type inProcessState struct {
	Pid     int      `json:"pid"`
	Threads []string `json:"threads"` // "NoNewPrivs Seccomp CapEff" per thread
	Socket  string   `json:"socket"`  // socket(AF_INET) outcome
}

// inProcessProbe runs in the inner stage itself (reexec.Point.InProcess): it reports
// its pid (1 when no child was started), the confinement of every thread, and
// whether an AF_INET socket can be created.
func inProcessProbe() int {
	st := inProcessState{Pid: os.Getpid()}
	tasks, _ := filepath.Glob("/proc/self/task/*/status")
	for _, f := range tasks {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		var nnp, sc, capEff string
		for _, line := range strings.Split(string(b), "\n") {
			k, v, _ := strings.Cut(line, ":")
			switch k {
			case "NoNewPrivs":
				nnp = strings.TrimSpace(v)
			case "Seccomp":
				sc = strings.TrimSpace(v)
			case "CapEff":
				capEff = strings.TrimSpace(v)
			}
		}
		st.Threads = append(st.Threads, nnp+" "+sc+" "+capEff)
	}
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM, 0)
	if err == nil {
		unix.Close(fd)
		st.Socket = "ok"
	} else {
		st.Socket = errnoName(err)
	}
	b, _ := json.Marshal(&st)
	fmt.Println(string(b))
	return 0
}

// A bubblewrap plan that needs no supervision is launched as bwrap directly; plans
// with host mount targets, and plain plans, still go through the launcher stage. The
// outcome is the same either way.
func TestWrap_DirectBubblewrap(t *testing.T) {
	r := sandboxtest.Require(t, sandbox.BackendBubblewrap)
	l := sandbox.NewLauncher(r, nil)
	w := t.TempDir()
	if err := os.WriteFile(filepath.Join(w, "f"), []byte("data"), 0o644); err != nil {
		t.Fatal(err)
	}
	readList := managedCtx("restricted", entryJSON(specialJSON("minimal"), "read"), entryJSON(pathJSON(w), "read"))
	// workspace-write with no .git/.agents/.codex yet: bwrap needs host mount targets.
	writable := managedCtx("restricted", entryJSON(specialJSON("root"), "read"), entryJSON(pathJSON(w), "write"))
	fullWrite := managedCtx("restricted", entryJSON(specialJSON("root"), "write"))

	tests := []struct {
		name, ctx string
		wantPath  string
	}{
		{"read list: bwrap directly", readList, r.Bubblewrap.Path},
		{"writable root with missing metadata: launcher stage", writable, "/proc/self/exe"},
		{"full write (plain plan): launcher stage", fullWrite, "/proc/self/exe"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := resolveFor(t, tt.ctx, "/", "", l)
			res := runPolicy(t, l, p, "/", append(baseEnv(), probeEnv+"=read"), nil, l.Executable(), filepath.Join(w, "f"))
			if res.cmd.Path != tt.wantPath {
				t.Errorf("command path: got %q, want %q", res.cmd.Path, tt.wantPath)
			}
			if res.cmd.SandboxType != sandbox.SandboxTypeLinuxSeccomp {
				t.Errorf("sandbox type: got %q, want %q", res.cmd.SandboxType, sandbox.SandboxTypeLinuxSeccomp)
			}
			if got := strings.TrimSpace(res.stdout); got != "ok" || res.code != 0 {
				t.Errorf("reading the workspace file: got %q (exit %d, stderr %q), want ok", got, res.code, res.stderr)
			}
		})
	}
	wantNoMetadataLeft(t, w)
}

// A build failure found while wrapping falls back to the stage, which reports it as
// before: exit 1 with the "error building bubblewrap command" line.
func TestWrap_DirectBubblewrapBuildFailureUsesStage(t *testing.T) {
	l := sandbox.NewLauncher(sandboxtest.Require(t, sandbox.BackendBubblewrap), nil)
	w := t.TempDir()
	target := t.TempDir()
	if err := os.Symlink(target, filepath.Join(w, "link")); err != nil {
		t.Fatal(err)
	}
	ctx := managedCtx("restricted", entryJSON(specialJSON("root"), "read"), entryJSON(pathJSON(w), "write"),
		entryJSON(pathJSON(filepath.Join(w, "link", "ro")), "read"))
	res := runPolicy(t, l, resolveFor(t, ctx, "/", "", l), "/", baseEnv(), nil, "/bin/true")
	if res.cmd.Path != "/proc/self/exe" {
		t.Errorf("command path: got %q, want the launcher stage", res.cmd.Path)
	}
	if res.code != 1 || !strings.Contains(res.stderr, "error building bubblewrap command") {
		t.Errorf("got exit %d, stderr %q; want exit 1 with the build error", res.code, res.stderr)
	}
}

// The in-process inner-stage command runs as pid 1 (no child) with every thread
// confined: no capabilities, no_new_privs, the Restricted seccomp filter.
func TestInProcess_Confined(t *testing.T) {
	l := sandbox.NewLauncher(sandboxtest.Require(t, sandbox.BackendBubblewrap), nil)
	ctx := managedCtx("restricted", entryJSON(specialJSON("minimal"), "read"))
	res := runPolicy(t, l, resolveFor(t, ctx, "/", "", l), "/", baseEnv(), nil, l.Executable(), inProcessFlag)
	var st inProcessState
	if err := json.Unmarshal([]byte(strings.TrimSpace(res.stdout)), &st); err != nil || res.code != 0 {
		t.Fatalf("probe output %q (exit %d, stderr %q): %v", res.stdout, res.code, res.stderr, err)
	}
	if st.Pid != 1 {
		t.Errorf("pid: got %d, want 1 (run in the inner stage, not a child)", st.Pid)
	}
	if len(st.Threads) < 2 {
		t.Errorf("threads: got %d, want the Go runtime's several", len(st.Threads))
	}
	for i, th := range st.Threads {
		if want := "1 2 0000000000000000"; th != want {
			t.Errorf("thread %d: got NoNewPrivs/Seccomp/CapEff %q, want %q", i, th, want)
		}
	}
	if st.Socket != "EPERM" {
		t.Errorf("socket(AF_INET): got %s, want EPERM (Restricted filter)", st.Socket)
	}

	// Another program with the same flag is started as a child, not run in-process.
	res = runPolicy(t, l, resolveFor(t, ctx, "/", "", l), "/", baseEnv(), nil, "/bin/echo", inProcessFlag)
	if got := strings.TrimSpace(res.stdout); got != inProcessFlag || res.code != 0 {
		t.Errorf("/bin/echo %s: got %q (exit %d, stderr %q), want the flag echoed", inProcessFlag, got, res.code, res.stderr)
	}
}
