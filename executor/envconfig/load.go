package envconfig

// Layer discovery, as the reference's codex-config load_local_config_layers does
// (spec/capabilities-0.171.0.md §6.2):
//
//	config:        system  <SystemDir>/config.toml            always (missing = empty)
//	               user    <CodexHome>/config.toml            always (missing = empty)
//	               project <dir>/.codex/config.toml           for each dir from the project
//	                                                          root down to cwd, trusted only
//	               legacy  <SystemDir>/managed_config.toml    when the file exists
//	requirements:  system  <SystemDir>/requirements.toml      when the file exists
//	               legacy  derived from managed_config.toml   when the file exists
//
// Project discovery reads the merged system + user + managed config: the root markers
// (project_root_markers, default [".git"]) and [projects."<path>"] trust_level.

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/execlab/executor/internal/oserr"
)

// Layer is one loaded source before projection.
type Layer struct {
	Source  string // as the wire prints it, e.g. "user (/root/.codex/config.toml)"
	BaseDir string // native absolute directory
	TOML    *Table
}

// Stack is an ordered set of layers, lowest precedence first.
type Stack struct {
	Layers []Layer
	// CloudInsertionIndex is the position at which a client inserts cloud layers.
	CloudInsertionIndex int
}

// Layers are the config and requirements stacks of one cwd.
type Layers struct {
	Config       Stack
	Requirements Stack
}

// LoadError is a failure to load a layer; Error is the detail the reference prints
// after "failed to load executor-local config: ".
type LoadError struct{ Msg string }

func (e *LoadError) Error() string { return e.Msg }

func loadErrorf(format string, args ...any) error {
	return &LoadError{Msg: fmt.Sprintf(format, args...)}
}

// readTOMLFile reads and parses path. A missing file is (nil, nil).
func readTOMLFile(path string) (*Table, []byte, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxConfigFileBytes+1))
	if err != nil {
		return nil, nil, err
	}
	if len(data) > MaxConfigFileBytes {
		return nil, nil, fmt.Errorf("file exceeds the %d-byte limit", MaxConfigFileBytes)
	}
	if !utf8.Valid(data) {
		return nil, nil, errors.New("stream did not contain valid UTF-8")
	}
	t, err := Parse(data)
	return t, data, err
}

// loadRequired loads a system or user config file: missing is an empty table; a parse
// error reads "<path>:<line>:<col>: <message>".
func loadRequired(path string) (*Table, error) {
	t, _, err := loadTOML(path, "config", parsedAt(path))
	if err == nil && t == nil {
		return NewTable(), nil
	}
	return t, err
}

// loadTOML is readTOMLFile with the load errors: parseErr words a parse error, and what
// names the file in a read error ("Failed to read <what> file <path>: <OS error>").
func loadTOML(path, what string, parseErr func(*ParseError) error) (*Table, []byte, error) {
	t, data, err := readTOMLFile(path)
	var pe *ParseError
	switch {
	case errors.As(err, &pe):
		return nil, nil, parseErr(pe)
	case err != nil:
		return nil, nil, loadErrorf("Failed to read %s file %s: %s", what, path, oserr.Text(err))
	}
	return t, data, nil
}

// parsedAt words a parse error of path as "<path>:<line>:<col>: <message>".
func parsedAt(path string) func(*ParseError) error {
	return func(pe *ParseError) error { return loadErrorf("%s:%d:%d: %s", path, pe.Line, pe.Column, pe.Msg) }
}

// parseFailed words a parse error of path as "<prefix> <path>: <snippet>".
func parseFailed(prefix, path string) func(*ParseError) error {
	return func(pe *ParseError) error { return loadErrorf("%s %s: %s", prefix, path, snippet(pe)) }
}

// load discovers and loads every layer for cwd (a native absolute path).
func (r *Reader) load(codexHome, cwd string) (*Layers, error) {
	sysConfig := filepath.Join(r.cfg.SystemDir, ConfigFile)
	sysReq := filepath.Join(r.cfg.SystemDir, RequirementsFile)
	managedPath := filepath.Join(r.cfg.SystemDir, ManagedConfigFile)
	userConfig := filepath.Join(codexHome, ConfigFile)

	managed, err := loadOptional(managedPath)
	if err != nil {
		return nil, err
	}
	system, err := loadRequired(sysConfig)
	if err != nil {
		return nil, err
	}
	user, err := loadRequired(userConfig)
	if err != nil {
		return nil, err
	}

	discovery := NewTable()
	merge(discovery, system)
	merge(discovery, user)
	if managed != nil {
		merge(discovery, managed)
	}
	markers, err := rootMarkers(discovery)
	if err != nil {
		return nil, err
	}

	out := &Layers{}
	// Requirements: the system file, then what the legacy managed config implies.
	if t, err := loadRequirements(sysReq); err != nil {
		return nil, err
	} else if t != nil {
		out.Requirements.Layers = append(out.Requirements.Layers, Layer{Source: sysReq, BaseDir: r.cfg.SystemDir, TOML: t})
		out.Requirements.CloudInsertionIndex = 1
	}
	if managed != nil {
		req, err := legacyRequirements(managed)
		if err != nil {
			return nil, err
		}
		out.Requirements.Layers = append(out.Requirements.Layers, Layer{Source: managedPath, BaseDir: r.cfg.SystemDir, TOML: req})
	}

	trust, err := newTrustContext(discovery, cwd, markers)
	if err != nil {
		return nil, err
	}
	out.Config.Layers = []Layer{
		{Source: "system (" + sysConfig + ")", BaseDir: r.cfg.SystemDir, TOML: system},
		{Source: "user (" + userConfig + ")", BaseDir: codexHome, TOML: user},
	}
	out.Config.CloudInsertionIndex = 1 // cloud config follows the system layer
	projects, err := projectLayers(cwd, codexHome, trust)
	if err != nil {
		return nil, err
	}
	out.Config.Layers = append(out.Config.Layers, projects...)
	if managed != nil {
		out.Config.Layers = append(out.Config.Layers, Layer{
			Source:  "legacy managed_config.toml (" + managedPath + ")",
			BaseDir: r.cfg.SystemDir,
			TOML:    managed,
		})
	}
	return out, nil
}

// loadOptional loads a file that may be absent (nil, nil).
func loadOptional(path string) (*Table, error) {
	t, _, err := loadTOML(path, "config", parsedAt(path))
	return t, err
}

// loadRequirements loads the system requirements file, which may be absent. A parse
// error reads "failed to parse requirements layer <path>: <snippet>" (PROBED).
func loadRequirements(path string) (*Table, error) {
	t, _, err := loadTOML(path, "requirements", parseFailed("failed to parse requirements layer", path))
	return t, err
}

// rootMarkers returns project_root_markers from the discovery config, or the default.
func rootMarkers(t *Table) ([]string, error) {
	v := t.Get(ProjectRootMarkersKey)
	if v == nil {
		return DefaultProjectRootMarkers, nil
	}
	if v.Kind != Array {
		return nil, loadErrorf("%s must be an array of strings", ProjectRootMarkersKey)
	}
	markers := make([]string, 0, len(v.Arr))
	for _, e := range v.Arr {
		if e.Kind != String {
			return nil, loadErrorf("%s must be an array of strings", ProjectRootMarkersKey)
		}
		markers = append(markers, e.Str)
	}
	return markers, nil
}

// legacyRequirements derives requirements from the legacy managed config
// (READ: legacy_requirements_to_toml_value; PROBED on 0.171.0 for every case below):
// allowed_approval_policies = [approval_policy] ("on-failure" reads as "on-request"; a
// {granular = {…}} table becomes an array of tables), allowed_approvals_reviewers =
// [approvals_reviewer] (+ "user" after "auto_review"; "guardian_subagent" is an alias
// of "auto_review"), allowed_sandbox_modes = ["read-only"] (+ sandbox_mode unless it
// is read-only). Other keys are ignored; a bad value fails with serde's text.
func legacyRequirements(managed *Table) (*Table, error) {
	out := NewTable()
	if v := managed.Get("approval_policy"); v != nil {
		p, err := legacyApprovalPolicy(v)
		if err != nil {
			return nil, err
		}
		out.Set("allowed_approval_policies", &Value{Kind: Array, Arr: []*Value{p}})
	}
	if v := managed.Get("approvals_reviewer"); v != nil {
		r, err := legacyEnum("approvals_reviewer", v, "user", "auto_review", "guardian_subagent")
		if err != nil {
			return nil, err
		}
		switch r {
		case "user":
			out.Set("allowed_approvals_reviewers", strArray("user"))
		default:
			out.Set("allowed_approvals_reviewers", strArray("auto_review", "user"))
		}
	}
	if v := managed.Get("sandbox_mode"); v != nil {
		m, err := legacyEnum("sandbox_mode", v, "read-only", "workspace-write", "danger-full-access")
		if err != nil {
			return nil, err
		}
		if m == "read-only" {
			out.Set("allowed_sandbox_modes", strArray(m))
		} else {
			out.Set("allowed_sandbox_modes", strArray("read-only", m))
		}
	}
	return out, nil
}

func strArray(ss ...string) *Value {
	v := &Value{Kind: Array, Arr: []*Value{}}
	for _, s := range ss {
		v.Arr = append(v.Arr, &Value{Kind: String, Str: s})
	}
	return v
}

func legacyErr(key, msg string) error {
	return loadErrorf("Failed to parse config requirements as TOML: %s\nin `%s`\n", msg, key)
}

// legacyEnum decodes a unit-variant enum as serde does, with its texts.
func legacyEnum(key string, v *Value, variants ...string) (string, error) {
	if v.Kind != String {
		return "", legacyErr(key, "invalid type: unit variant, expected string only")
	}
	for _, a := range variants {
		if v.Str == a {
			return a, nil
		}
	}
	return "", legacyErr(key, "unknown variant `"+v.Str+"`, expected one of `"+strings.Join(variants, "`, `")+"`")
}

// approvalPolicies are AskForApproval's variants in serde's order; "granular" is a
// newtype variant (a table).
var approvalPolicies = []string{"untrusted", "on-failure", "on-request", "granular", "never"}

// granularFields are GranularApprovalConfig's fields in serialization order; the ones
// marked true default to false when absent (READ; the output order is PROBED).
var granularFields = []struct {
	name     string
	optional bool
}{{"sandbox_approval", false}, {"rules", false}, {"skill_approval", true}, {"request_permissions", true}, {"mcp_elicitations", false}}

func legacyApprovalPolicy(v *Value) (*Value, error) {
	const key = "approval_policy"
	if v.Kind == TableKind && v.Tab.Len() == 1 && v.Tab.Get("granular") != nil {
		g := v.Tab.Get("granular")
		if g.Kind != TableKind {
			return nil, legacyErr(key, "invalid type: expected struct GranularApprovalConfig")
		}
		out := NewTable()
		for _, f := range granularFields {
			fv := g.Tab.Get(f.name)
			switch {
			case fv == nil && f.optional:
				fv = &Value{Kind: Boolean}
			case fv == nil:
				return nil, legacyErr(key, "missing field `"+f.name+"`")
			case fv.Kind != Boolean:
				return nil, legacyErr(key, "invalid type: expected a boolean for `"+f.name+"`")
			}
			out.Set(f.name, &Value{Kind: Boolean, Bool: fv.Bool})
		}
		wrap := NewTable()
		wrap.Set("granular", tableValue(out))
		return tableValue(wrap), nil
	}
	if v.Kind != String {
		return nil, legacyErr(key, "invalid type: unit variant, expected string only")
	}
	switch v.Str {
	case "granular":
		return nil, legacyErr(key, "invalid type: unit variant, expected newtype variant")
	case "on-failure":
		return &Value{Kind: String, Str: "on-request"}, nil
	}
	for _, a := range approvalPolicies {
		if v.Str == a {
			return &Value{Kind: String, Str: a}, nil
		}
	}
	return nil, legacyErr(key, "unknown variant `"+v.Str+"`, expected one of `"+strings.Join(approvalPolicies, "`, `")+"`")
}

// sanitizeProject removes the keys a project layer may not set.
func sanitizeProject(t *Table) {
	for _, k := range projectDenylist {
		t.Delete(k)
	}
	if f := t.Get("features"); f != nil && f.Kind == TableKind {
		for _, k := range projectDeniedFeatures {
			f.Tab.Delete(k)
		}
	}
}

// projectLayers returns the trusted project layers for cwd, root first.
func projectLayers(cwd, codexHome string, trust *trustContext) ([]Layer, error) {
	var dirs []string
	for d := cwd; ; d = filepath.Dir(d) {
		dirs = append(dirs, d)
		if d == trust.projectRoot || d == filepath.Dir(d) {
			break
		}
	}
	homeCanon := canonical(codexHome)
	var out []Layer
	for i := len(dirs) - 1; i >= 0; i-- {
		dir := dirs[i]
		dotCodex := filepath.Join(dir, ProjectConfigDir)
		if st, err := os.Stat(dotCodex); err != nil || !st.IsDir() {
			continue
		}
		if dotCodex == codexHome || canonical(dotCodex) == homeCanon {
			continue
		}
		if !trust.trusted(dir) {
			continue
		}
		file := filepath.Join(dotCodex, ConfigFile)
		t, data, err := loadTOML(file, "project config", parseFailed("Error parsing project config file", file))
		switch {
		case err != nil:
			return nil, err
		case data == nil:
			t = NewTable() // no config.toml: an empty layer, dropped by projection
		}
		sanitizeProject(t)
		hooks := trust.hooksFolder(dir)
		if hooks != "" {
			t.Delete("hooks")
		}
		out = append(out, Layer{Source: "project (" + file + ")", BaseDir: dotCodex, TOML: t})
		if hooks == "" {
			continue
		}
		// A linked worktree takes its hooks from the main checkout's matching folder.
		hooksFile := filepath.Join(hooks, ConfigFile)
		root, _, err := loadTOML(hooksFile, "project hooks config", parseFailed("Error parsing project hooks config file", hooksFile))
		if err != nil {
			return nil, err
		}
		if root == nil || root.Get("hooks") == nil {
			continue
		}
		ht := NewTable()
		ht.Set("hooks", root.Get("hooks"))
		out = append(out, Layer{Source: "project (" + hooksFile + ")", BaseDir: hooks, TOML: ht})
	}
	return out, nil
}

// snippet renders pe as the toml crate's Display does:
//
//	TOML parse error at line 1, column 9
//	  |
//	1 | model =
//	  |         ^
//	<message>
func snippet(pe *ParseError) string {
	num := fmt.Sprint(pe.Line)
	pad := strings.Repeat(" ", len(num))
	return fmt.Sprintf("TOML parse error at line %d, column %d\n%s |\n%s | %s\n%s | %s%s\n%s\n",
		pe.Line, pe.Column, pad, num, pe.lineText, pad, strings.Repeat(" ", max(pe.Column-1, 0)),
		strings.Repeat("^", max(pe.span, 1)), pe.Msg)
}

// canonical resolves symlinks in p, or returns p when it cannot.
func canonical(p string) string {
	if c, err := filepath.EvalSymlinks(p); err == nil {
		return c
	}
	return p
}
