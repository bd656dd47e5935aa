package policy_test

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	"github.com/execlab/executor/jsonwire"
	"github.com/execlab/executor/sandbox/policy"
)

func mustResolve(t *testing.T, ctx string, opts *policy.ResolveOptions) *policy.Policy {
	t.Helper()
	var c policy.Context
	if err := json.Unmarshal([]byte(ctx), &c); err != nil {
		t.Fatalf("decoding %s: %v", ctx, err)
	}
	p, err := policy.Resolve(&c, opts)
	if err != nil {
		t.Fatalf("resolving: %v", err)
	}
	return p
}

func entry(kindJSON, access string) string {
	return `{"path":` + kindJSON + `,"access":"` + access + `"}`
}

func special(kind string) string { return `{"type":"special","value":{"kind":"` + kind + `"}}` }
func lit(p string) string        { return `{"type":"path","path":"file://` + p + `"}` }
func glob(p string) string       { return `{"type":"glob_pattern","pattern":"` + p + `"}` }

func ctxFull(entries, extra string) string {
	return `{"permissions":{"type":"managed","network":"restricted","file_system":{"type":"restricted","entries":[` +
		entries + `]}},"windowsSandboxLevel":"disabled"` + extra + `}`
}

func TestPolicy_PrecedenceSpecExample(t *testing.T) {
	p := mustResolve(t, ctxFull(
		entry(lit("/repo"), "write")+","+entry(lit("/repo/a"), "deny")+","+entry(lit("/repo/a/b"), "write"), ""),
		&policy.ResolveOptions{CommandCwd: "/repo"})
	tests := []struct {
		path string
		want policy.Access
	}{
		{"/repo/x", policy.AccessWrite},
		{"/repo/a/x", policy.AccessDeny},
		{"/repo/a/b/x", policy.AccessWrite},
		{"/elsewhere", policy.AccessDeny},
		{"/", policy.AccessDeny},
		{"x", policy.AccessWrite},                // relative to cwd /repo
		{"/repo/.git/config", policy.AccessRead}, // protected metadata
		{"/repo/.codex", policy.AccessRead},
		{"/repo/a/b/.agents/x", policy.AccessRead},
		{"/repo/.gitignore", policy.AccessWrite},
	}
	for _, tt := range tests {
		if got := p.Access(tt.path); got != tt.want {
			t.Errorf("Access(%q): got %v, want %v", tt.path, got, tt.want)
		}
	}
}

func TestPolicy_TiesAndMetadataWrites(t *testing.T) {
	p := mustResolve(t, ctxFull(
		entry(lit("/w"), "write")+","+entry(lit("/w"), "read")+","+entry(lit("/v"), "write")+","+
			entry(lit("/v"), "deny")+","+entry(lit("/w/.git"), "write"), ""),
		&policy.ResolveOptions{CommandCwd: "/"})
	tests := []struct {
		path string
		want policy.Access
	}{
		{"/w/x", policy.AccessWrite},
		{"/v/x", policy.AccessDeny},
		{"/w/.git/x", policy.AccessWrite}, // explicit write inside W/N lifts protection
		{"/w/.codex/x", policy.AccessRead},
	}
	for _, tt := range tests {
		if got := p.Access(tt.path); got != tt.want {
			t.Errorf("Access(%q): got %v, want %v", tt.path, got, tt.want)
		}
	}
}

func TestResolve_ProjectRoots(t *testing.T) {
	tests := []struct {
		name    string
		entries string
		extra   string
		want    []policy.ResolvedEntry
	}{
		{"no roots grants nothing", entry(special("project_roots"), "write"), ``, nil},
		{"empty roots grants nothing", entry(special("project_roots"), "write"), `,"workspaceRoots":[]`, nil},
		{"two roots", entry(special("project_roots"), "write"), `,"workspaceRoots":["file:///a","file:///b"]`,
			[]policy.ResolvedEntry{{Path: "/a", Access: policy.AccessWrite}, {Path: "/b", Access: policy.AccessWrite}}},
		{"subpath normalized", `{"path":{"type":"special","value":{"kind":"project_roots","subpath":"x//y/"}},"access":"read","missing_path_behavior":"skip"}`,
			`,"workspaceRoots":["file:///a"]`, []policy.ResolvedEntry{{Path: "/a/x/y", Access: policy.AccessRead, SkipIfMissing: true}}},
		{"dotdot write dropped", `{"path":{"type":"special","value":{"kind":"project_roots","subpath":"../x"}},"access":"write"}`,
			`,"workspaceRoots":["file:///a"]`, nil},
		{"dotdot read denies root", `{"path":{"type":"special","value":{"kind":"project_roots","subpath":"../x"}},"access":"read"}`,
			`,"workspaceRoots":["file:///a"]`, []policy.ResolvedEntry{{Path: "/a", Access: policy.AccessDeny}}},
		{"absolute deny denies root", `{"path":{"type":"special","value":{"kind":"project_roots","subpath":"/x"}},"access":"deny"}`,
			`,"workspaceRoots":["file:///a"]`, []policy.ResolvedEntry{{Path: "/a", Access: policy.AccessDeny}}},
		{"empty subpath is root", `{"path":{"type":"special","value":{"kind":"project_roots","subpath":""}},"access":"write"}`,
			`,"workspaceRoots":["file:///a"]`, []policy.ResolvedEntry{{Path: "/a", Access: policy.AccessWrite}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := mustResolve(t, ctxFull(tt.entries, tt.extra), &policy.ResolveOptions{CommandCwd: "/cwd"})
			if !reflect.DeepEqual(p.Entries, tt.want) {
				t.Fatalf("got %+v, want %+v", p.Entries, tt.want)
			}
		})
	}
}

func TestResolve_SpecialsAndGlobs(t *testing.T) {
	p := mustResolve(t, ctxFull(
		entry(special("tmpdir"), "write")+","+entry(special("slash_tmp"), "write")+","+
			entry(special("minimal"), "read")+","+entry(special("root"), "read")+","+
			entry(glob("**/*.pem"), "deny")+","+entry(glob("~/.ssh/**"), "deny")+","+
			entry(glob("/abs/*.key"), "deny")+","+entry(glob("codex-project-roots://.env"), "deny")+","+
			entry(glob("*.txt"), "read"),
		`,"cwd":"file:///c%5Bd","workspaceRoots":["file:///r"],"temporaryDirectories":["file:///ignored"]`),
		&policy.ResolveOptions{CommandCwd: "/cmd", Home: "/home/u", TmpDir: "/var/tmp/t"})
	wantEntries := []policy.ResolvedEntry{
		{Path: "/var/tmp/t", Access: policy.AccessWrite},
		{Path: "/tmp", Access: policy.AccessWrite, SkipIfMissing: true},
		{Path: "/", Access: policy.AccessRead},
	}
	if !reflect.DeepEqual(p.Entries, wantEntries) {
		t.Errorf("entries: got %+v, want %+v", p.Entries, wantEntries)
	}
	wantGlobs := []string{`/c\[d/**/*.pem`, "/home/u/.ssh/**", "/abs/*.key", "/r/.env"}
	if !reflect.DeepEqual(p.DenyGlobs, wantGlobs) {
		t.Errorf("globs: got %q, want %q", p.DenyGlobs, wantGlobs)
	}
	if p.Minimal != policy.AccessRead || p.Cwd != "/c[d" {
		t.Errorf("got minimal %v cwd %q", p.Minimal, p.Cwd)
	}
	if got := p.Access("/c[d/k/x.pem"); got != policy.AccessDeny {
		t.Errorf("pem under cwd: got %v, want deny", got)
	}
	if got := p.Access("/etc/passwd"); got != policy.AccessRead {
		t.Errorf("/etc/passwd: got %v, want read", got)
	}
}

func TestResolve_Errors(t *testing.T) {
	tests := []struct {
		name, ctx string
		opts      policy.ResolveOptions
		want      string
	}{
		{"foreign path", ctxFull(entry(lit("server/share"), "read"), ""), policy.ResolveOptions{},
			"failed to prepare process sandbox: invalid sandbox permission path: 'file://server/share' is invalid on 'linux'"},
		{"fs needs cwd", ctxFull(entry(special("project_roots"), "write"), ""), policy.ResolveOptions{Purpose: policy.ForFileSystem},
			"file system sandbox context with dynamic permissions requires cwd"},
		{"fs relative glob needs cwd", ctxFull(entry(glob("*.env"), "deny"), ""), policy.ResolveOptions{Purpose: policy.ForFileSystem},
			"file system sandbox context with dynamic permissions requires cwd"},
		{"mxc", `{"permissions":{"type":"disabled"},"windowsSandboxLevel":"mxc"}`, policy.ResolveOptions{},
			"native MXC is unavailable on this executor"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var c policy.Context
			if err := json.Unmarshal([]byte(tt.ctx), &c); err != nil {
				t.Fatal(err)
			}
			_, err := policy.Resolve(&c, &tt.opts)
			var pe *policy.Error
			if !errors.As(err, &pe) || pe.Message != tt.want || pe.Code != jsonwire.CodeInvalidParams {
				t.Fatalf("got %v, want -32602 %q", err, tt.want)
			}
		})
	}
}

func TestResolve_CwdFallbacks(t *testing.T) {
	c := ctxFull(entry(glob("*.env"), "deny"), "")
	if p := mustResolve(t, c, &policy.ResolveOptions{CommandCwd: "/cmd"}); p.Cwd != "/cmd" || p.DenyGlobs[0] != "/cmd/*.env" {
		t.Errorf("process: got cwd %q globs %q, want /cmd", p.Cwd, p.DenyGlobs)
	}
	c = ctxFull(entry(special("root"), "read"), "")
	if p := mustResolve(t, c, &policy.ResolveOptions{Purpose: policy.ForFileSystem, ExecutorCwd: "/exe"}); p.Cwd != "/exe" {
		t.Errorf("fs: got cwd %q, want /exe", p.Cwd)
	}
}

func TestResolve_RuntimeGrantsAndAliases(t *testing.T) {
	alias := func(first string) (string, bool) {
		if first == "/lib" {
			return "/usr/lib", true
		}
		return "", false
	}
	p := mustResolve(t, ctxFull(entry(lit("/lib/x"), "deny")+","+entry(lit("/opt"), "read"), ""),
		&policy.ResolveOptions{CommandCwd: "/", RuntimeReadGrants: []string{"/opt/exe", "/usr/local/bin/executor"}, TopLevelAlias: alias})
	want := []policy.ResolvedEntry{
		{Path: "/usr/lib/x", Access: policy.AccessDeny},
		{Path: "/opt", Access: policy.AccessRead},
		{Path: "/usr/local/bin/executor", Access: policy.AccessRead},
	}
	if !reflect.DeepEqual(p.Entries, want) {
		t.Fatalf("got %+v, want %+v", p.Entries, want)
	}
}

func TestPolicy_Predicates(t *testing.T) {
	tests := []struct {
		name                      string
		ctx                       string
		fullRead, fullWrite, plat bool
		row                       int
		requires                  bool
	}{
		{"disabled", `{"permissions":{"type":"disabled"},"windowsSandboxLevel":"disabled"}`, true, true, false, 1, false},
		{"external restricted", `{"permissions":{"type":"external","network":"restricted"},"windowsSandboxLevel":"disabled"}`, true, true, false, 3, false},
		{"managed unrestricted restricted net", `{"permissions":{"type":"managed","network":"restricted","file_system":{"type":"unrestricted"}},"windowsSandboxLevel":"disabled"}`, true, true, false, 3, true},
		{"root write", ctxFull(entry(special("root"), "write"), ""), true, true, false, 3, true},
		{"root write read shadowed", ctxFull(entry(special("root"), "write")+","+entry(lit("/a"), "read")+","+entry(lit("/a"), "write"), ""), true, true, false, 3, true},
		{"root write read narrows", ctxFull(entry(special("root"), "write")+","+entry(lit("/a"), "read"), ""), true, false, false, 4, true},
		{"root write deny glob", ctxFull(entry(special("root"), "write")+","+entry(glob("/a/*"), "deny"), ""), false, false, false, 4, true},
		{"root write same-path deny", ctxFull(entry(special("root"), "write")+","+entry(lit("/a"), "write")+","+entry(lit("/a"), "deny"), ""), false, false, false, 4, true},
		{"root read", ctxFull(entry(special("root"), "read"), ""), true, false, false, 4, true},
		{"minimal only", ctxFull(entry(special("minimal"), "read"), ""), false, false, true, 4, true},
		{"minimal under root read", ctxFull(entry(special("minimal"), "read")+","+entry(special("root"), "read"), ""), true, false, false, 4, true},
		{"empty restricted", ctxFull("", ""), false, false, false, 4, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := mustResolve(t, tt.ctx, &policy.ResolveOptions{CommandCwd: "/"})
			if got := p.FullRead(); got != tt.fullRead {
				t.Errorf("FullRead: got %v, want %v", got, tt.fullRead)
			}
			if got := p.FullWrite(); got != tt.fullWrite {
				t.Errorf("FullWrite: got %v, want %v", got, tt.fullWrite)
			}
			if got := p.PlatformDefaults(); got != tt.plat {
				t.Errorf("PlatformDefaults: got %v, want %v", got, tt.plat)
			}
			if got := p.Plan(false).Row; got != tt.row {
				t.Errorf("Plan row: got %d, want %d", got, tt.row)
			}
			if got := p.RequiresPlatformSandbox(false); got != tt.requires {
				t.Errorf("RequiresPlatformSandbox: got %v, want %v", got, tt.requires)
			}
			if got := p.Plan(true); got.Row != 5 || got.Seccomp != policy.SeccompProxyRouted || !got.UnshareNet {
				t.Errorf("managed plan: got %+v, want row 5 proxy-routed", got)
			}
		})
	}
}

// Ports of the reference's mode-selection tests (spec/sandbox.md §7.1).
func TestPolicy_ModeSelection(t *testing.T) {
	full := mustResolve(t, `{"permissions":{"type":"disabled"},"windowsSandboxLevel":"disabled"}`, nil)
	if pl := full.Plan(false); pl.Seccomp != policy.SeccompNone || pl.Isolated {
		t.Errorf("full_network_policy_without_managed_network_skips_seccomp: got %+v", pl)
	}
	if pl := full.Plan(true); pl.Seccomp != policy.SeccompProxyRouted {
		t.Errorf("managed_network_enforces_seccomp_even_for_full_network_policy: got %+v", pl)
	}
	restricted := mustResolve(t, ctxFull(entry(special("root"), "read"), ""), nil)
	if pl := restricted.Plan(false); pl.Seccomp != policy.SeccompRestricted || !pl.UnshareNet {
		t.Errorf("restricted_network_without_proxy_routing_uses_restricted_mode: got %+v", pl)
	}
	rw := mustResolve(t, ctxFull(entry(special("root"), "write"), ""), nil)
	if pl := rw.Plan(false); pl.Seccomp != policy.SeccompRestricted || pl.Isolated {
		t.Errorf("restricted_network_policy_always_installs_seccomp (full write): got %+v", pl)
	}
	if !restricted.NeedsFSHelper(false) || restricted.NeedsFSHelper(true) || full.NeedsFSHelper(false) {
		t.Errorf("NeedsFSHelper: got write %v read %v full %v, want true false false",
			restricted.NeedsFSHelper(false), restricted.NeedsFSHelper(true), full.NeedsFSHelper(false))
	}
}

func TestPolicy_EncodeDecode(t *testing.T) {
	p := mustResolve(t, ctxFull(entry(special("root"), "read")+","+entry(glob("/x/*.pem"), "deny")+","+entry(special("minimal"), "read"), ""),
		&policy.ResolveOptions{CommandCwd: "/w"})
	s, err := p.Encode()
	if err != nil {
		t.Fatal(err)
	}
	q, err := policy.DecodePolicy(s)
	if err != nil {
		t.Fatalf("decoding %s: %v", s, err)
	}
	if !reflect.DeepEqual(p, q) {
		t.Fatalf("got %+v, want %+v", q, p)
	}
	for _, bad := range []string{`{"entries":[{"path":"rel","access":"read"}],"cwd":"/"}`, `{"entries":[{"path":"/a","access":"all"}],"cwd":"/"}`, `{"cwd":"x"}`} {
		if _, err := policy.DecodePolicy(bad); err == nil {
			t.Errorf("DecodePolicy(%s): got nil error, want rejection", bad)
		}
	}
}
