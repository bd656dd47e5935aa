package process_test

import (
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/execlab/executor/executor/protocol"
	"github.com/execlab/executor/sandbox"
	"github.com/execlab/executor/sandbox/policy"
	"github.com/execlab/executor/sandbox/sandboxtest"
)

// Issue 26 finding 1: the request's environment must not reach anything that runs
// before the sandbox is in place (the launcher stage, bwrap, the inner stage before its
// confinement). These tests build a small shared library whose constructor (and
// la_version, for LD_AUDIT) writes a marker file, naming the process that loaded it,
// into a directory outside every writable root.

// markerLibSource is the marker library: one file per loading process in MARKER_DIR,
// named <how>-<pid>-<n>, holding the process's executable and its NoNewPrivs and Seccomp
// lines, and a line "marker-lib: <how> in <exe>" on stderr (which reports a load inside
// the sandbox, where the file cannot be written). STUBS defines the symbols a planted copy must provide so that the loader
// reaches the constructor (bwrap is linked with BIND_NOW).
const markerLibSource = `
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static void mark(const char *how) {
	char exe[4096], path[4096], status[16384];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	exe[n < 0 ? 0 : n] = 0;
	dprintf(2, "marker-lib: %s in %s\n", how, exe); /* seen even where nothing is writable */
	int fd = -1;
	for (int i = 0; fd < 0 && i < 16; i++) { /* a stage and the command it execs share a pid */
		snprintf(path, sizeof path, "%s/%s-%d-%d", MARKER_DIR, how, (int)getpid(), i);
		fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	}
	if (fd < 0)
		return;
	dprintf(fd, "%s\n", exe);
	int sfd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
	if (sfd >= 0) {
		ssize_t m = read(sfd, status, sizeof status - 1);
		close(sfd);
		status[m < 0 ? 0 : m] = 0;
		for (char *line = strtok(status, "\n"); line; line = strtok(NULL, "\n"))
			if (!strncmp(line, "NoNewPrivs", 10) || !strncmp(line, "Seccomp:", 8))
				dprintf(fd, "%s\n", line);
	}
	close(fd);
}

__attribute__((constructor)) static void marker_init(void) { mark("ctor"); }

unsigned int la_version(unsigned int v) { mark("audit"); return v; }
`

// buildMarkerLib compiles the marker library to out, writing markers into markerDir,
// with one stub function per name in stubs and soname (if not empty).
func buildMarkerLib(t *testing.T, out, markerDir, soname string, stubs []string) {
	t.Helper()
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		t.Fatalf("gcc is needed to build the marker library: %v", err)
	}
	src := markerLibSource
	for _, s := range stubs {
		src += "long " + s + "(void) { return -1; }\n"
	}
	cfile := filepath.Join(t.TempDir(), "marker.c")
	if err := os.WriteFile(cfile, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"-shared", "-fPIC", "-O1", "-o", out, fmt.Sprintf("-DMARKER_DIR=%q", markerDir), cfile}
	if soname != "" {
		args = append(args, "-Wl,-soname,"+soname)
	}
	if b, err := exec.Command(gcc, args...).CombinedOutput(); err != nil {
		t.Fatalf("building the marker library: %v\n%s", err, b)
	}
}

// markers returns "file: contents" for every marker in dir.
func markers(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		b, _ := os.ReadFile(filepath.Join(dir, e.Name()))
		out = append(out, e.Name()+": "+strings.ReplaceAll(strings.TrimSpace(string(b)), "\n", "; "))
	}
	return out
}

// loaderProfile is one profile the pre-sandbox environment is checked under.
type loaderProfile struct {
	name    string
	backend string // the plan the launcher picks
	ctx     func(t *testing.T, ws string) *policy.Context
}

// loaderProfiles: read-only (bwrap started directly), workspace-write (the launcher
// stage supervises bwrap: it has mask targets in the workspace), and the plain plan
// (the launcher stage installs seccomp and execs the command; the root is writable
// there, so markers of the command itself are expected).
var loaderProfiles = []loaderProfile{
	{"read-only", sandbox.BackendBubblewrap, func(t *testing.T, _ string) *policy.Context { return readOnly(t) }},
	{"workspace-write", sandbox.BackendBubblewrap, func(t *testing.T, ws string) *policy.Context { return sandboxtest.WorkspaceWrite(t, ws) }},
	{"plain", "plain", func(t *testing.T, _ string) *policy.Context { return fullWriteRestricted(t) }},
}

// stageExecutables are bwrap and this binary (every stage of the launcher).
func stageExecutables() []string {
	self, _ := os.Executable()
	bwrap, _ := exec.LookPath("bwrap")
	bwrap, _ = filepath.EvalSymlinks(bwrap)
	return []string{self, bwrap}
}

// stageLoads returns the marker library's stderr lines in out that name a stage.
func stageLoads(out string) []string {
	var loads []string
	for _, line := range strings.Split(out, "\n") {
		for _, exe := range stageExecutables() {
			if strings.HasPrefix(line, "marker-lib: ") && strings.HasSuffix(line, " in "+exe) {
				loads = append(loads, line)
			}
		}
	}
	return loads
}

// preSandboxMarkers returns the markers written by something other than the command:
// bwrap or this binary (every stage), or anything at all when the command runs under
// bwrap (it cannot write outside its roots).
func preSandboxMarkers(t *testing.T, dir, backend string) []string {
	t.Helper()
	stages := stageExecutables()
	var bad []string
	for _, m := range markers(t, dir) {
		_, rest, _ := strings.Cut(m, ": ")
		exe, _, _ := strings.Cut(rest, ";")
		if backend == sandbox.BackendBubblewrap || exe == stages[0] || exe == stages[1] {
			bad = append(bad, m)
		}
	}
	return bad
}

// A client's LD_PRELOAD or LD_AUDIT names a library in the workspace: no stage before
// the sandbox loads it (before the fix, the launcher stage and bwrap ran its
// constructor with NoNewPrivs 0, Seccomp 0 and wrote outside every root), and the
// command still sees the variable, exactly as sent.
func TestStart_Sandboxed_LoaderVariablesStayOutOfStages(t *testing.T) {
	l := sandboxtest.Launcher(t, sandbox.BackendBubblewrap)
	for _, variable := range []string{"LD_PRELOAD", "LD_AUDIT"} {
		for i, prof := range loaderProfiles {
			t.Run(variable+"/"+prof.name, func(t *testing.T) {
				ws := t.TempDir()
				markerDir := t.TempDir()
				lib := filepath.Join(ws, "evil.so")
				buildMarkerLib(t, lib, markerDir, "", nil)
				ctx := prof.ctx(t, ws)
				m, n := sandboxedManager(t, l)
				p := startParams("ld"+strconv.Itoa(i), protocol.FromNative(ws), "/usr/bin/env")
				p.Env[variable] = lib
				p.Env["HOME"] = ws
				p.Sandbox = ctx
				_, out, exited, _ := runToExit(t, m, n, p)
				if exited.code != 0 || !strings.Contains(out, variable+"="+lib+"\n") {
					t.Errorf("got exit %d output %q, want exit 0 and %s=%s in the command's environment", exited.code, out, variable, lib)
				}
				if loads := stageLoads(out); len(loads) > 0 {
					t.Errorf("%s was loaded by a stage: %q (output %q)", variable, loads, out)
				}
				if bad := preSandboxMarkers(t, markerDir, prof.backend); len(bad) > 0 {
					t.Errorf("%s was loaded before the sandbox was in place: %q", variable, bad)
				}
			})
		}
	}
}

// The executor's own environment: an LD_PRELOAD in the server's environment reaches the
// command through envPolicy inherit "all", and no stage before the sandbox loads it.
func TestStart_Sandboxed_InheritedLoaderVariableStaysOutOfStages(t *testing.T) {
	l := sandboxtest.Launcher(t, sandbox.BackendBubblewrap)
	lib := filepath.Join(t.TempDir(), "evil.so")
	markerDir := t.TempDir()
	buildMarkerLib(t, lib, markerDir, "", nil) // before the variable is set: gcc must not load it
	t.Setenv("LD_PRELOAD", lib)
	for i, prof := range loaderProfiles {
		t.Run(prof.name, func(t *testing.T) {
			ws := t.TempDir()
			m, n := sandboxedManager(t, l)
			p := startParams("inherit"+strconv.Itoa(i), protocol.FromNative(ws), "/usr/bin/env")
			p.EnvPolicy = &protocol.ExecEnvPolicy{Inherit: protocol.EnvInheritAll, Exclude: []string{}, Set: map[string]string{}, IncludeOnly: []string{}}
			p.Sandbox = prof.ctx(t, ws)
			_, out, exited, _ := runToExit(t, m, n, p)
			if exited.code != 0 || !strings.Contains(out, "LD_PRELOAD="+lib+"\n") {
				t.Errorf("got exit %d output %q, want exit 0 and the inherited LD_PRELOAD in the command's environment", exited.code, out)
			}
			if loads := stageLoads(out); len(loads) > 0 {
				t.Errorf("the executor's LD_PRELOAD was loaded by a stage: %q (output %q)", loads, out)
			}
			if bad := preSandboxMarkers(t, markerDir, prof.backend); len(bad) > 0 {
				t.Errorf("the executor's LD_PRELOAD was loaded before the sandbox was in place: %q", bad)
			}
			for _, f := range markers(t, markerDir) { // the command's own markers (plain plan)
				os.Remove(filepath.Join(markerDir, strings.SplitN(f, ":", 2)[0]))
			}
		})
	}
}

// The no-malicious-client form: the client's environment has LD_LIBRARY_PATH into the
// workspace (common in dev shells), a sandboxed command plants a library there that
// bwrap links, and the next, innocent, sandboxed command must not have bwrap load it.
func TestStart_Sandboxed_PlantedLibraryNotLoadedByBwrap(t *testing.T) {
	l := sandboxtest.Launcher(t, sandbox.BackendBubblewrap)
	soname, stubs := bwrapLinkedLibrary(t)
	for i, prof := range loaderProfiles[:2] {
		t.Run(prof.name, func(t *testing.T) {
			ws := t.TempDir()
			markerDir := t.TempDir()
			staged := filepath.Join(t.TempDir(), soname)
			buildMarkerLib(t, staged, markerDir, soname, stubs)
			libDir := filepath.Join(ws, "build", "lib")
			ctx := prof.ctx(t, ws)
			m, n := sandboxedManager(t, l)
			if prof.name == "workspace-write" {
				// The planting command runs sandboxed too: the workspace is writable.
				p := startParams("plant"+strconv.Itoa(i), protocol.FromNative(ws), "sh", "-c", `mkdir -p "$1" && cp "$2" "$1/"`, "sh", libDir, staged)
				p.Sandbox = ctx
				if _, out, exited, _ := runToExit(t, m, n, p); exited.code != 0 {
					t.Fatalf("planting: exit %d output %q", exited.code, out)
				}
			} else {
				if err := os.MkdirAll(libDir, 0o755); err != nil {
					t.Fatal(err)
				}
				if b, err := exec.Command("cp", staged, libDir+"/").CombinedOutput(); err != nil {
					t.Fatalf("planting: %v %s", err, b)
				}
			}
			p := startParams("innocent"+strconv.Itoa(i), protocol.FromNative(ws), "sh", "-c", `echo "LD_LIBRARY_PATH=$LD_LIBRARY_PATH"`)
			p.Env["LD_LIBRARY_PATH"] = libDir
			p.Env["HOME"] = ws
			p.Sandbox = ctx
			_, out, exited, _ := runToExit(t, m, n, p)
			if exited.code != 0 || strings.TrimSpace(out) != "LD_LIBRARY_PATH="+libDir {
				t.Errorf("innocent command: got exit %d output %q, want exit 0 and LD_LIBRARY_PATH=%s", exited.code, out, libDir)
			}
			if bad := markers(t, markerDir); len(bad) > 0 {
				t.Errorf("planted %s was loaded: %q", soname, bad)
			}
		})
	}
}

// bwrapLinkedLibrary picks a library bwrap links other than libc (libcap.so.2 where
// bwrap links it) and returns its soname and the symbols bwrap imports from it, which
// a planted copy must define.
func bwrapLinkedLibrary(t *testing.T) (string, []string) {
	t.Helper()
	bwrap, err := exec.LookPath("bwrap")
	if err != nil {
		t.Fatal(err)
	}
	f, err := elf.Open(bwrap)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	needed, err := f.ImportedLibraries()
	if err != nil {
		t.Fatal(err)
	}
	sort.Slice(needed, func(i, j int) bool { return needed[i] == "libcap.so.2" && needed[j] != "libcap.so.2" })
	imports, err := f.DynamicSymbols()
	if err != nil {
		t.Fatal(err)
	}
	for _, soname := range needed {
		if strings.HasPrefix(soname, "libc.so") || strings.HasPrefix(soname, "ld-") {
			continue
		}
		real := ""
		for _, dir := range []string{"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64", "/usr/lib64", "/lib", "/usr/lib"} {
			if _, err := os.Stat(filepath.Join(dir, soname)); err == nil {
				real = filepath.Join(dir, soname)
				break
			}
		}
		if real == "" {
			continue
		}
		lf, err := elf.Open(real)
		if err != nil {
			continue
		}
		defs, err := lf.DynamicSymbols()
		lf.Close()
		if err != nil {
			continue
		}
		defined := map[string]bool{}
		for _, s := range defs {
			if s.Section != elf.SHN_UNDEF {
				defined[s.Name] = true
			}
		}
		var stubs []string
		for _, s := range imports {
			if s.Section == elf.SHN_UNDEF && defined[s.Name] && (s.Library == "" || s.Library == soname) {
				stubs = append(stubs, s.Name)
			}
		}
		return soname, stubs
	}
	t.Fatalf("no library of %s to plant", bwrap)
	return "", nil
}

// The command's environment is byte for byte what it was before the stages stopped
// receiving it: the request's entries in key order, and under bwrap the PWD bwrap sets
// (the directory it entered: the cwd, else $HOME when the profile hides the cwd) in
// place of a client PWD, else last. Names and values no shell would write, a client
// variable that looks like the stages' encoding, and loader variables pass unchanged.
func TestStart_Sandboxed_EnvironmentExact(t *testing.T) {
	l := sandboxtest.Launcher(t, sandbox.BackendBubblewrap)
	minimal := func(t *testing.T, _ string) *policy.Context {
		return sandboxtest.Context(t, `{"permissions":{"type":"managed","network":"restricted","file_system":{"type":"restricted","entries":[
			{"path":{"type":"special","value":{"kind":"minimal"}},"access":"read"}]}},"windowsSandboxLevel":"disabled"}`)
	}
	odd := map[string]string{
		"PATH": "/usr/bin:/bin", "A.B": "dotted", "x-y": "", "EQ": "a=b=c", "SP": " lead and trail ",
		"codex-sandbox-env": "1", "codex-sandbox-env:LD_PRELOAD": "/nonexistent.so", "LD_LIBRARY_PATH": "/nonexistent",
		"GCONV_PATH": "/nonexistent", "MALLOC_CHECK_": "0", "GLIBC_TUNABLES": "glibc.malloc.check=0", "TMPDIR": "/tmp",
	}
	tests := []struct {
		name     string
		ctx      func(t *testing.T, ws string) *policy.Context
		env      map[string]string // HOME is set to the workspace unless present
		wantPWD  string            // "" none added; "cwd" or "home"
		replaces bool              // a client PWD is replaced in place
	}{
		{"read-only", loaderProfiles[0].ctx, odd, "cwd", false},
		{"workspace-write", loaderProfiles[1].ctx, odd, "cwd", false},
		{"plain", loaderProfiles[2].ctx, odd, "", false},
		{"read-only, client PWD", loaderProfiles[0].ctx, map[string]string{"PATH": "/usr/bin:/bin", "PWD": "/client", "Z": "z"}, "cwd", true},
		{"plain, client PWD", loaderProfiles[2].ctx, map[string]string{"PATH": "/usr/bin:/bin", "PWD": "/client"}, "", false},
		{"hidden cwd starts in HOME", minimal, map[string]string{"PATH": "/usr/bin:/bin", "HOME": "/usr"}, "home", false},
		{"hidden cwd, no HOME", minimal, map[string]string{"PATH": "/usr/bin:/bin", "HOME": ""}, "/", false},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ws := t.TempDir()
			env := map[string]string{}
			for k, v := range tt.env {
				env[k] = v
			}
			if _, ok := env["HOME"]; !ok {
				env["HOME"] = ws
			} else if env["HOME"] == "" {
				delete(env, "HOME")
			}
			m, n := sandboxedManager(t, l)
			p := startParams("exact"+strconv.Itoa(i), protocol.FromNative(ws), "/usr/bin/env")
			p.Env, p.Sandbox = env, tt.ctx(t, ws)
			_, out, exited, _ := runToExit(t, m, n, p)
			keys := make([]string, 0, len(env))
			for k := range env {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			pwd := map[string]string{"": "", "cwd": ws, "home": env["HOME"], "/": "/"}[tt.wantPWD]
			var want strings.Builder
			for _, k := range keys {
				v := env[k]
				if k == "PWD" && tt.replaces {
					v = pwd
				}
				want.WriteString(k + "=" + v + "\n")
			}
			if _, client := env["PWD"]; pwd != "" && !(client && tt.replaces) {
				want.WriteString("PWD=" + pwd + "\n")
			}
			if exited.code != 0 || out != want.String() {
				t.Errorf("got exit %d environment\n%s\nwant exactly\n%s", exited.code, out, want.String())
			}
		})
	}
}
