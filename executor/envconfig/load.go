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

	"github.com/execlab/executor/executor/oserr"
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
	t, _, err := readTOMLFile(path)
	var pe *ParseError
	switch {
	case errors.As(err, &pe):
		return nil, loadErrorf("%s:%d:%d: %s", path, pe.Line, pe.Column, pe.Msg)
	case err != nil:
		return nil, loadErrorf("Failed to read config file %s: %s", path, oserr.Text(err))
	case t == nil:
		return NewTable(), nil
	}
	return t, nil
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
	if t, err := loadOptional(sysReq); err != nil {
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
	t, _, err := readTOMLFile(path)
	var pe *ParseError
	switch {
	case errors.As(err, &pe):
		return nil, loadErrorf("%s:%d:%d: %s", path, pe.Line, pe.Column, pe.Msg)
	case err != nil:
		return nil, loadErrorf("Failed to read config file %s: %s", path, oserr.Text(err))
	}
	return t, nil
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
// (READ: legacy_requirements_to_toml_value; PROBED for approval_policy and
// sandbox_mode): allowed_approval_policies = [approval_policy],
// allowed_approvals_reviewers = [approvals_reviewer] (+ "user" after "auto_review"),
// allowed_sandbox_modes = ["read-only"] (+ sandbox_mode unless it is read-only).
func legacyRequirements(managed *Table) (*Table, error) {
	out := NewTable()
	str := func(key string, allowed ...string) (string, bool, error) {
		v := managed.Get(key)
		if v == nil {
			return "", false, nil
		}
		if v.Kind != String {
			return "", false, loadErrorf("Failed to parse config requirements as TOML: invalid type for `%s`", key)
		}
		for _, a := range allowed {
			if v.Str == a {
				return v.Str, true, nil
			}
		}
		return "", false, loadErrorf("Failed to parse config requirements as TOML: unknown variant `%s` for `%s`", v.Str, key)
	}
	strs := func(ss ...string) *Value {
		v := &Value{Kind: Array, Arr: []*Value{}}
		for _, s := range ss {
			v.Arr = append(v.Arr, &Value{Kind: String, Str: s})
		}
		return v
	}
	if p, ok, err := str("approval_policy", "untrusted", "on-failure", "on-request", "never"); err != nil {
		return nil, err
	} else if ok {
		out.Set("allowed_approval_policies", strs(p))
	}
	if r, ok, err := str("approvals_reviewer", "user", "auto_review"); err != nil {
		return nil, err
	} else if ok {
		if r == "auto_review" {
			out.Set("allowed_approvals_reviewers", strs(r, "user"))
		} else {
			out.Set("allowed_approvals_reviewers", strs(r))
		}
	}
	if m, ok, err := str("sandbox_mode", "read-only", "workspace-write", "danger-full-access"); err != nil {
		return nil, err
	} else if ok {
		if m == "read-only" {
			out.Set("allowed_sandbox_modes", strs(m))
		} else {
			out.Set("allowed_sandbox_modes", strs("read-only", m))
		}
	}
	return out, nil
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
		t, data, err := readTOMLFile(file)
		var pe *ParseError
		switch {
		case errors.As(err, &pe):
			return nil, loadErrorf("Error parsing project config file %s: %s", file, snippet(pe))
		case err != nil:
			return nil, loadErrorf("Failed to read project config file %s: %s", file, oserr.Text(err))
		case data == nil:
			t = NewTable() // no config.toml: an empty layer, dropped by projection
		}
		sanitizeProject(t)
		out = append(out, Layer{Source: "project (" + file + ")", BaseDir: dotCodex, TOML: t})
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
	return fmt.Sprintf("TOML parse error at line %d, column %d\n%s |\n%s | %s\n%s | %s^\n%s\n",
		pe.Line, pe.Column, pad, num, pe.lineText, pad, strings.Repeat(" ", max(pe.Column-1, 0)), pe.Msg)
}

// canonical resolves symlinks in p, or returns p when it cannot.
func canonical(p string) string {
	if c, err := filepath.EvalSymlinks(p); err == nil {
		return c
	}
	return p
}
