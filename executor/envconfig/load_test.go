package envconfig

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/execlab/executor/executor/protocol"
	"github.com/execlab/executor/jsonwire"
)

type fixture struct {
	root, sys, home string
	r               *Reader
}

func newFixture(t *testing.T) *fixture {
	root := t.TempDir()
	f := &fixture{root: root, sys: filepath.Join(root, "etc"), home: filepath.Join(root, "codex-home")}
	writeFile(t, filepath.Join(f.home, ".keep"), "")
	f.r = NewReader(&Config{CodexHome: f.home, Home: "/home/u", SystemDir: f.sys,
		Hostname: func() (string, error) { return "h", nil }})
	return f
}

func (f *fixture) read(t *testing.T, cwd string, cfg, req [][]string) *protocol.EnvironmentConfigReadResult {
	t.Helper()
	res, err := f.r.Read(context.Background(), &protocol.EnvironmentConfigReadParams{
		Cwd: protocol.FromNative(cwd), ConfigPaths: cfg, RequirementsPaths: req})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func sources(s protocol.EnvironmentConfigLayerStack) string {
	var out []string
	for _, l := range s.Layers {
		out = append(out, l.Source)
	}
	return strings.Join(out, "|") + fmt.Sprintf("#%d", s.CloudInsertionIndex)
}

func TestRead_LayerOrderAndCloudIndex(t *testing.T) {
	f := newFixture(t)
	writeFile(t, filepath.Join(f.sys, "config.toml"), "model = \"sys\"\n")
	writeFile(t, filepath.Join(f.sys, "managed_config.toml"), "model = \"managed\"\nsandbox_mode = \"workspace-write\"\napproval_policy = \"on-request\"\napprovals_reviewer = \"auto_review\"\n")
	writeFile(t, filepath.Join(f.sys, "requirements.toml"), "allowed_sandbox_modes = [\"read-only\"]\n")
	writeFile(t, filepath.Join(f.home, "config.toml"), fmt.Sprintf("model = \"user\"\n[projects.%q]\ntrust_level = \"trusted\"\n", f.root+"/repo"))
	writeFile(t, filepath.Join(f.root, "repo/.git"), "")
	writeFile(t, filepath.Join(f.root, "repo/.codex/config.toml"), "model = \"proj\"\nmodel_provider = \"x\"\n")
	writeFile(t, filepath.Join(f.root, "repo/a/.codex/config.toml"), "model = \"a\"\n")

	res := f.read(t, filepath.Join(f.root, "repo/a/missing"), [][]string{{"model"}, {"model_provider"}}, [][]string{{"allowed_sandbox_modes"}, {"allowed_approvals_reviewers"}, {"allowed_approval_policies"}})
	wantCfg := fmt.Sprintf("system (%s/config.toml)|user (%s/config.toml)|project (%s/repo/.codex/config.toml)|project (%s/repo/a/.codex/config.toml)|legacy managed_config.toml (%s/managed_config.toml)#1",
		f.sys, f.home, f.root, f.root, f.sys)
	if got := sources(res.Config); got != wantCfg {
		t.Errorf("config layers %s, want %s", got, wantCfg)
	}
	if got := res.Config.Layers[2].TOML; got != "model = \"proj\"\n" {
		t.Errorf("project layer %q: model_provider must be dropped", got)
	}
	wantReq := fmt.Sprintf("%s/requirements.toml|%s/managed_config.toml#1", f.sys, f.sys)
	if got := sources(res.Requirements); got != wantReq {
		t.Errorf("requirements layers %s, want %s", got, wantReq)
	}
	want := "allowed_approval_policies = [\"on-request\"]\nallowed_approvals_reviewers = [\"auto_review\", \"user\"]\nallowed_sandbox_modes = [\"read-only\", \"workspace-write\"]\n"
	if got := res.Requirements.Layers[1].TOML; got != want {
		t.Errorf("derived requirements %q, want %q", got, want)
	}
	if res.UserHomeDir == nil || *res.UserHomeDir != "file:///home/u" || res.Hostname == nil || *res.Hostname != "h" {
		t.Errorf("userHomeDir %v hostname %v", res.UserHomeDir, res.Hostname)
	}

	// Only the user layer survives: the system layer does not, so the index is 0.
	res = f.read(t, f.root, [][]string{{"projects"}}, [][]string{{"nothing"}})
	if got, want := sources(res.Config), fmt.Sprintf("user (%s/config.toml)#0", f.home); got != want {
		t.Errorf("got %s, want %s", got, want)
	}
	if got := sources(res.Requirements); got != "#0" {
		t.Errorf("requirements %s, want none", got)
	}
}

func TestFindProjectRoot_Markers(t *testing.T) {
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "emptydir/.git/.keep"), "")
	writeFile(t, filepath.Join(root, "head/.git/HEAD"), "ref: x\n")
	writeFile(t, filepath.Join(root, "file/.git"), "")
	writeFile(t, filepath.Join(root, "hg/.hg/.keep"), "")
	cases := []struct {
		cwd     string
		markers []string
		want    string
	}{
		{"emptydir/in", DefaultProjectRootMarkers, "emptydir/in"},
		{"head/in/deeper", DefaultProjectRootMarkers, "head"},
		{"file/in", DefaultProjectRootMarkers, "file"},
		{"hg/x", []string{".hg"}, "hg"},
		{"head/in", nil, "head/in"},
	}
	for _, c := range cases {
		if got := findProjectRoot(filepath.Join(root, c.cwd), c.markers); got != filepath.Join(root, c.want) {
			t.Errorf("findProjectRoot(%s, %q) = %s, want %s", c.cwd, c.markers, got, c.want)
		}
	}
}

func TestRead_TrustOrder(t *testing.T) {
	f := newFixture(t)
	writeFile(t, filepath.Join(f.root, "repo/.git/HEAD"), "ref: x\n")
	for _, d := range []string{"repo", "repo/sub", "repo/sib"} {
		writeFile(t, filepath.Join(f.root, d, ".codex/config.toml"), fmt.Sprintf("model = %q\n", d))
	}
	trust := func(lines ...string) {
		var b strings.Builder
		for i := 0; i+1 < len(lines); i += 2 {
			fmt.Fprintf(&b, "[projects.%q]\ntrust_level = %q\n", filepath.Join(f.root, lines[i]), lines[i+1])
		}
		writeFile(t, filepath.Join(f.home, "config.toml"), b.String())
	}
	models := func(cwd string) string {
		res := f.read(t, filepath.Join(f.root, cwd), [][]string{{"model"}}, nil)
		var out []string
		for _, l := range res.Config.Layers {
			out = append(out, strings.TrimSpace(l.TOML))
		}
		return strings.Join(out, "|")
	}
	trust("repo", "trusted", "repo/sib", "untrusted")
	if got, want := models("repo/sub"), `model = "repo"|model = "repo/sub"`; got != want {
		t.Errorf("trusted root: %s, want %s", got, want)
	}
	if got, want := models("repo/sib"), `model = "repo"`; got != want {
		t.Errorf("untrusted subdirectory: %s, want %s", got, want)
	}
	trust("repo/sub", "trusted")
	if got, want := models("repo/sub"), `model = "repo/sub"`; got != want {
		t.Errorf("trusted subdirectory only: %s, want %s", got, want)
	}
	trust()
	if got := models("repo/sub"); got != "" {
		t.Errorf("no trust: %s, want no layers", got)
	}
}

func TestRead_ParamsChecksInOrder(t *testing.T) {
	f := newFixture(t)
	cases := []struct {
		p    protocol.EnvironmentConfigReadParams
		want string
	}{
		{protocol.EnvironmentConfigReadParams{Cwd: "file:///C:/x"}, "at least one config or requirements path is required"},
		{protocol.EnvironmentConfigReadParams{Cwd: "file:///C:/x", ConfigPaths: [][]string{{}}}, "TOML paths must contain at least one key segment"},
		{protocol.EnvironmentConfigReadParams{Cwd: "file:///C:/x", RequirementsPaths: [][]string{{"a"}}}, "'file:///C:/x' is invalid on 'linux'"},
	}
	for _, c := range cases {
		_, err := f.r.Read(context.Background(), &c.p)
		e, ok := err.(*jsonwire.Error)
		if !ok || e.Code != jsonwire.CodeInvalidParams || e.Message != c.want {
			t.Errorf("Read(%+v) = %v, want -32602 %q", c.p, err, c.want)
		}
	}
}

func TestRead_ParseErrorTexts(t *testing.T) {
	f := newFixture(t)
	writeFile(t, filepath.Join(f.home, "config.toml"), fmt.Sprintf("[projects.%q]\ntrust_level = \"trusted\"\n", f.root+"/p"))
	writeFile(t, filepath.Join(f.root, "p/.git"), "")
	writeFile(t, filepath.Join(f.root, "p/.codex/config.toml"), "model = \n")
	_, err := f.r.Read(context.Background(), &protocol.EnvironmentConfigReadParams{Cwd: protocol.FromNative(f.root + "/p"), ConfigPaths: [][]string{{"model"}}})
	want := "failed to load executor-local config: Error parsing project config file " + f.root + "/p/.codex/config.toml: TOML parse error at line 1, column 9\n  |\n1 | model = \n  |         ^\nstring values must be quoted, expected literal string\n"
	if e, ok := err.(*jsonwire.Error); !ok || e.Code != jsonwire.CodeInternal || e.Message != want {
		t.Errorf("got %v, want -32603 %q", err, want)
	}
}

func TestGitRoots_LinkedWorktree(t *testing.T) {
	root := t.TempDir()
	admin := filepath.Join(root, "main/.git/worktrees/wt")
	writeFile(t, filepath.Join(root, "main/.git/HEAD"), "ref: x\n")
	writeFile(t, filepath.Join(root, "wt/.git"), "gitdir: "+admin+"\n")
	writeFile(t, filepath.Join(root, "wt/d/.keep"), "")
	check := func(what, wantRepo string) {
		t.Helper()
		checkout, repo := gitRoots(filepath.Join(root, "wt/d"))
		if checkout != filepath.Join(root, "wt") || repo != wantRepo {
			t.Errorf("%s: gitRoots = %q, %q; want %q, %q", what, checkout, repo, filepath.Join(root, "wt"), wantRepo)
		}
	}
	writeFile(t, filepath.Join(admin, "commondir"), "../..\n")
	check("no back-pointer", "")
	writeFile(t, filepath.Join(admin, "gitdir"), "../../../../wt/.git\n")
	check("valid worktree", filepath.Join(root, "main"))
	writeFile(t, filepath.Join(admin, "commondir"), "/elsewhere\n")
	check("commondir elsewhere", "")
	writeFile(t, filepath.Join(root, "wt/.git"), "gitdir: ../x/modules/y\n")
	check("not a worktree", "")
	if c, r := gitRoots(filepath.Join(root, "main/sub")); c != filepath.Join(root, "main") || r != c {
		t.Errorf("regular checkout: %q, %q", c, r)
	}
}
