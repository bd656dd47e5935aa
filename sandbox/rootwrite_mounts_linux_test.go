package sandbox

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/execlab/executor/sandbox/policy"
)

// Launch-time entry handling behind the root-write flags (spec capabilities-0.171.0.md
// §11), checked on the computed mount view: missing `skip` carve-outs stay masked, a
// missing `skip` write entry is dropped (it cannot exempt protected metadata), a missing
// metadata-named carve-out is an empty directory, and a writable /dev/shm is the host's.
func TestBuildMounts_RootWriteCarveOutsAndDevShm(t *testing.T) {
	ws, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	mkdirs(t, filepath.Join(ws, ".git"))
	writeFiles(t, filepath.Join(ws, ".git", "HEAD"))
	e := func(p string, a policy.Access) policy.ResolvedEntry { return policy.ResolvedEntry{Path: p, Access: a} }
	skip := func(p string, a policy.Access) policy.ResolvedEntry {
		return policy.ResolvedEntry{Path: p, Access: a, SkipIfMissing: true}
	}
	const r, w, d = policy.AccessRead, policy.AccessWrite, policy.AccessDeny
	j := func(rel string) string { return filepath.Join(ws, rel) }
	shmBind := func(args []string) bool { return strings.Contains(strings.Join(args, " "), "--bind /dev/shm /dev/shm") }

	tests := []struct {
		name    string
		entries []policy.ResolvedEntry
		want    map[string]string
		shm     bool
	}{
		{"approved root write", []policy.ResolvedEntry{e("/", w), skip(j(".git"), r), skip(j(".codex"), r), skip(j(".agents"), r), skip(j("secret"), d)},
			map[string]string{j(".git"): "ro", j(".codex"): "masked", j(".agents"): "masked", j("secret"): "masked", ws: "rw", "/dev/shm": "rw"}, true},
		{"workspace write", []policy.ResolvedEntry{e("/", r), e(ws, w), skip(j("foo"), r)},
			map[string]string{j("foo"): "masked", j(".codex"): "masked", ws: "rw"}, false},
		{"missing skip write entry cannot exempt metadata", []policy.ResolvedEntry{e("/", r), e(ws, w), skip(j(".codex/sub"), w)},
			map[string]string{j(".codex"): "masked", ws: "rw"}, false},
		{"writable /dev", []policy.ResolvedEntry{e("/", r), e("/dev", w)}, map[string]string{"/dev/shm": "rw"}, false},
		{"own /dev/shm entry", []policy.ResolvedEntry{e("/", w), e("/dev/shm", w), e(j(".git"), r)}, map[string]string{"/dev/shm": "rw"}, false},
		{"denied /dev/shm", []policy.ResolvedEntry{e("/", w), e("/dev/shm", d)}, map[string]string{"/dev/shm": "masked"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &policy.Policy{Restricted: true, Cwd: ws, Entries: tt.entries}
			mp, err := buildMounts(p, "", mountOptions{dry: true, roBindFD: true})
			if err != nil {
				t.Fatalf("buildMounts: %v", err)
			}
			if got := shmBind(mp.args); got != tt.shm {
				t.Errorf("host /dev/shm bound = %v, want %v\nargs %q", got, tt.shm, mp.args)
			}
			tab, err := simulateMounts(mp.args)
			if err != nil {
				t.Fatalf("%v\nargs %q", err, mp.args)
			}
			for path, want := range tt.want {
				if got := viewOf(tab, path); got != want {
					t.Errorf("%s: got %s, want %s\nargs %q", path, got, want, mp.args)
				}
			}
			for _, n := range []string{".codex", ".agents"} {
				for _, ht := range mp.targets {
					if ht.path == j(n) && !ht.dir {
						t.Errorf("missing %s masked as a file, want an empty directory", n)
					}
				}
			}
			for _, ht := range mp.targets {
				if ht.path == j("secret") && ht.dir {
					t.Errorf("missing deny entry masked as a directory, want an empty file")
				}
			}
		})
	}
	if _, err := os.Lstat(j(".codex")); err == nil {
		t.Errorf("a dry plan created %s", j(".codex"))
	}
}
