package sandbox

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/execlab/executor/internal/reexec"
	"github.com/execlab/executor/sandbox/policy"
)

func TestProcMountFailed(t *testing.T) {
	tests := []struct {
		stderr string
		want   bool
	}{
		{"bwrap: Can't mount proc on /newroot/proc: Invalid argument", true}, // detects_proc_mount_invalid_argument_failure
		{"bwrap: Can't mount proc on /newroot/proc: Operation not permitted", true},
		{"bwrap: Can't mount tmpfs on /newroot/dev: Invalid argument", false}, // ignores_non_proc_mount_errors
		{"bwrap: Can't mount proc on /newroot/proc: No such device", false},
		{"", false},
	}
	for _, tt := range tests {
		if got := procMountFailed(tt.stderr); got != tt.want {
			t.Errorf("procMountFailed(%q): got %v, want %v", tt.stderr, got, tt.want)
		}
	}
}

func TestStageArgs_RoundTrip(t *testing.T) {
	a := &stageArgs{policyCwd: "/p", commandCwd: "/c", profile: "{}", haveProfile: true, backend: "bubblewrap",
		bwrap: "/usr/bin/bwrap", bwrapFeatures: []string{"perms", "as-pid-1"}, arg0: "", haveArg0: true,
		noProc: true, inheritPID: true, inner: true, command: []string{"sh", "--", "-c"}}
	got, err := parseStageArgs(a.encode())
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, a) {
		t.Fatalf("got %+v, want %+v", got, a)
	}
	if _, err := parseStageArgs([]string{"--bogus"}); err == nil {
		t.Errorf("unknown flag: got nil error")
	}
}

func TestStage_Dispatch(t *testing.T) {
	// dispatch_argv0_and_hidden_flag: both forms reach the CLI; a missing profile is
	// reported without running anything.
	for _, args := range [][]string{
		{"/x/codex-linux-sandbox", "--", "true"},
		{"codex-linux-sandbox", StageFlag, "--", "true"},
		{"/usr/bin/executor", StageFlag, "--", "true"},
	} {
		handled, code := reexec.Dispatch(args)
		if !handled || code != exitBuildFailure {
			t.Errorf("Dispatch(%q): got (%v, %d), want (true, 1)", args, handled, code)
		}
	}
	for _, args := range [][]string{{"executor", "serve"}, {"executor", FSHelperFlag}, {}} {
		if handled, _ := reexec.Dispatch(args); handled {
			t.Errorf("Dispatch(%q): got handled, want not", args)
		}
	}
}

func TestTrustedBinary_CandidateRejection(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "bwrap")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.Chmod(dir, 0o755)
	if !trustedBinary(bin, nil) {
		t.Errorf("plain candidate: got rejected, want accepted")
	}
	if trustedBinary(bin, []string{dir}) {
		t.Errorf("candidate under excluded cwd: got accepted")
	}
	os.Chmod(dir, 0o777)
	if trustedBinary(bin, nil) {
		t.Errorf("candidate in world-writable dir: got accepted")
	}
	os.Chmod(dir, 0o755)
	os.Chmod(bin, 0o775)
	if trustedBinary(bin, nil) {
		t.Errorf("group-writable candidate: got accepted")
	}
	p := &policy.Policy{Restricted: true, Entries: []policy.ResolvedEntry{{Path: dir, Access: policy.AccessWrite}}}
	if bwrapAllowedFor(bin, p, "/") || bwrapAllowedFor(bin, &policy.Policy{}, dir) {
		t.Errorf("bwrap under writable root or command cwd: got allowed")
	}
	if !bwrapAllowedFor("/usr/bin/bwrap", p, "/") {
		t.Errorf("system bwrap: got rejected")
	}
}

func TestLandlockRefusal(t *testing.T) {
	e := func(p string, a policy.Access) policy.ResolvedEntry { return policy.ResolvedEntry{Path: p, Access: a} }
	tests := []struct {
		name    string
		p       policy.Policy
		managed bool
		want    string
	}{
		{"managed", policy.Policy{Restricted: true}, true, "managed network"},
		{"full write", policy.Policy{Restricted: true, Entries: []policy.ResolvedEntry{e("/", policy.AccessWrite)}}, false, ""},
		{"read only", policy.Policy{Restricted: true, Entries: []policy.ResolvedEntry{e("/", policy.AccessRead)}}, false, ""},
		{"allow list", policy.Policy{Restricted: true, Minimal: policy.AccessRead, Entries: []policy.ResolvedEntry{e("/opt/x", policy.AccessRead)}}, false, ""},
		{"workspace write", policy.Policy{Restricted: true, Entries: []policy.ResolvedEntry{e("/", policy.AccessRead), e("/w", policy.AccessWrite)}}, false, "writable root /w"},
		{"write with metadata covered", policy.Policy{Restricted: true, Entries: []policy.ResolvedEntry{e("/", policy.AccessRead), e("/w", policy.AccessWrite),
			e("/w/.git", policy.AccessWrite), e("/w/.agents", policy.AccessWrite), e("/w/.codex", policy.AccessWrite), e("/w/.aws", policy.AccessWrite)}}, false, ""},
		{"read under write", policy.Policy{Restricted: true, Entries: []policy.ResolvedEntry{e("/w", policy.AccessWrite), e("/w/.git", policy.AccessWrite),
			e("/w/.agents", policy.AccessWrite), e("/w/.codex", policy.AccessWrite), e("/w/.aws", policy.AccessWrite), e("/w/r", policy.AccessRead)}}, false, "read-only path /w/r"},
		{"deny under read", policy.Policy{Restricted: true, Entries: []policy.ResolvedEntry{e("/repo", policy.AccessRead), e("/repo/secrets", policy.AccessDeny)}}, false, "deny path /repo/secrets"},
		{"deny glob", policy.Policy{Restricted: true, Entries: []policy.ResolvedEntry{e("/", policy.AccessRead)}, DenyGlobs: []string{"/w/**/*.env"}}, false, "deny glob /w/**/*.env"},
	}
	for _, tt := range tests {
		if got := landlockRefusal(&tt.p, tt.managed); got != tt.want {
			t.Errorf("%s: got %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestMakeProxyDir(t *testing.T) {
	tmp := t.TempDir()
	long := filepath.Join(tmp, strings.Repeat("d", 100))
	if err := os.Mkdir(long, 0o755); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, tmpDir, wantParent string
	}{
		{"TMPDIR", tmp, tmp},
		{"unset", "", "/tmp"},
		{"relative", "rel", "/tmp"},
		{"too long for sun_path", long, "/tmp"},
	}
	for _, tt := range tests {
		a, err := makeProxyDir(tt.tmpDir)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		b, err := makeProxyDir(tt.tmpDir)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		fi, err := os.Lstat(a)
		switch {
		case err != nil:
			t.Errorf("%s: %v", tt.name, err)
		case filepath.Dir(a) != tt.wantParent || !strings.HasPrefix(filepath.Base(a), proxyDirPrefix):
			t.Errorf("%s: got %q, want %s/%s<pid>-<n>", tt.name, a, tt.wantParent, proxyDirPrefix)
		case fi.Mode() != os.ModeDir|0o700:
			t.Errorf("%s: got mode %v, want drwx------", tt.name, fi.Mode())
		case a == b:
			t.Errorf("%s: second directory reused %q", tt.name, a)
		case len(filepath.Join(a, "65535.sock")) > maxSocketPath:
			t.Errorf("%s: socket path %q too long", tt.name, a)
		}
		os.Remove(a)
		os.Remove(b)
	}
}

func TestSweepStaleProxyDirs(t *testing.T) {
	tmp := t.TempDir()
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	mk := func(pid int, n string) string {
		d := filepath.Join(tmp, proxyDirPrefix+strconv.Itoa(pid)+"-"+n)
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
		return d
	}
	stale := mk(dead.Process.Pid, "0")
	ln, err := net.Listen("unix", filepath.Join(stale, "3128.sock"))
	if err != nil {
		t.Fatal(err)
	}
	ln.(*net.UnixListener).SetUnlinkOnClose(false)
	ln.Close()
	foreign := mk(dead.Process.Pid, "1")
	if err := os.WriteFile(filepath.Join(foreign, "keep"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	live := mk(os.Getpid(), "0")
	sweepStaleProxyDirs(tmp)
	for _, tt := range []struct {
		dir  string
		want bool
	}{{stale, false}, {foreign, true}, {live, true}} {
		if _, err := os.Lstat(tt.dir); (err == nil) != tt.want {
			t.Errorf("%s after sweep: got exists=%v, want %v", filepath.Base(tt.dir), err == nil, tt.want)
		}
	}
}
