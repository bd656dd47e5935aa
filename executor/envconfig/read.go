package envconfig

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/execlab/executor/executor/protocol"
	"github.com/execlab/executor/jsonwire"
)

// Config says where the layers live. The zero value means the reference's defaults;
// a Config is never modified after it is passed to NewReader.
type Config struct {
	// CodexHome is $CODEX_HOME. "" means Home/.codex. It is canonicalized on every
	// read (symlinks resolved); a CodexHome that does not exist fails the read.
	CodexHome string
	// Home is the user's home directory ($HOME, else the passwd entry), reported as
	// userHomeDir. "" means unknown (userHomeDir null; CodexHome must then be set).
	Home string
	// SystemDir holds config.toml, requirements.toml and managed_config.toml.
	// Default DefaultSystemDir; tests point it elsewhere.
	SystemDir string
	// Hostname reports the host name (hostname member; requirements may match on it).
	// Nil means the reference's rule (hostname.go), computed once per process.
	Hostname func() (string, error)
}

// Reader serves environmentConfig/read. It keeps no state between reads: every read
// loads the files afresh, as the reference does. Safe for concurrent use.
type Reader struct {
	cfg Config
}

// NewReader returns a Reader for cfg (nil: DefaultConfig, CODEX_HOME at Home/.codex).
func NewReader(cfg *Config) *Reader {
	var c Config
	if cfg != nil {
		c = *cfg
	} else {
		c = DefaultConfig()
	}
	if c.SystemDir == "" {
		c.SystemDir = DefaultSystemDir
	}
	if c.Hostname == nil {
		c.Hostname = processHostName
	}
	return &Reader{cfg: c}
}

// DefaultConfig is the reference's environment but for CODEX_HOME, which the caller
// sets (cmd/ reads the variable; "" means Home/.codex): $HOME (or the passwd entry of
// the current user), /etc/codex, the normalized host name (hostname.go).
func DefaultConfig() Config {
	return Config{
		Home:      homeDir(),
		SystemDir: DefaultSystemDir,
		Hostname:  processHostName,
	}
}

// Read serves one environmentConfig/read. Errors are *jsonwire.Error: -32602 for the
// params checks (in the reference's order), -32603 for a layer that cannot be loaded.
func (r *Reader) Read(_ context.Context, p *protocol.EnvironmentConfigReadParams) (*protocol.EnvironmentConfigReadResult, error) {
	if len(p.ConfigPaths) == 0 && len(p.RequirementsPaths) == 0 {
		return nil, jsonwire.InvalidParams("at least one config or requirements path is required")
	}
	for _, paths := range [][][]string{p.ConfigPaths, p.RequirementsPaths} {
		for _, path := range paths {
			if len(path) == 0 {
				return nil, jsonwire.InvalidParams("TOML paths must contain at least one key segment")
			}
		}
	}
	cwd, err := p.Cwd.Native()
	if err != nil {
		return nil, &jsonwire.Error{Code: jsonwire.CodeInvalidParams, Message: err.Error()}
	}
	codexHome, err := r.codexHome()
	if err != nil {
		return nil, jsonwire.Internal("failed to find Codex home: %s", err.Error())
	}
	layers, err := r.load(codexHome, cwd)
	if err != nil {
		return nil, jsonwire.Internal("failed to load executor-local config: %s", err.Error())
	}
	res := &protocol.EnvironmentConfigReadResult{
		CodexHomeDir: protocol.FromNative(codexHome),
		Config:       wireStack(layers.Config, p.ConfigPaths),
		Requirements: wireStack(layers.Requirements, p.RequirementsPaths),
	}
	if r.cfg.Home != "" && filepath.IsAbs(r.cfg.Home) {
		u := protocol.FromNative(r.cfg.Home)
		res.UserHomeDir = &u
	}
	if h, err := r.cfg.Hostname(); err == nil && h != "" {
		res.Hostname = &h
	}
	return res, nil
}

// codexHome resolves CODEX_HOME as the reference's find_codex_home does: the variable,
// which must name an existing directory, canonicalized; else ~/.codex as is. The error
// texts are the reference's (PROBED).
func (r *Reader) codexHome() (string, error) {
	if v := r.cfg.CodexHome; v != "" {
		st, err := os.Stat(v)
		switch {
		case err != nil:
			return "", fmt.Errorf("CODEX_HOME points to %q, but that path does not exist", v)
		case !st.IsDir():
			return "", fmt.Errorf("CODEX_HOME points to %q, but that path is not a directory", v)
		}
		p, err := filepath.Abs(v)
		if err != nil {
			return "", err
		}
		return filepath.EvalSymlinks(p)
	}
	if r.cfg.Home == "" {
		return "", errors.New("could not find home directory")
	}
	return filepath.Join(r.cfg.Home, DefaultCodexHomeDir), nil
}

// wireStack projects every layer of s to paths and renders the survivors.
func wireStack(s Stack, paths [][]string) protocol.EnvironmentConfigLayerStack {
	out := protocol.EnvironmentConfigLayerStack{Layers: []protocol.EnvironmentConfigLayer{}}
	for i, l := range s.Layers {
		t := Project(l.TOML, paths)
		if t == nil {
			continue
		}
		if i < s.CloudInsertionIndex {
			out.CloudInsertionIndex++
		}
		out.Layers = append(out.Layers, protocol.EnvironmentConfigLayer{
			Source:  l.Source,
			BaseDir: protocol.FromNative(l.BaseDir),
			TOML:    Marshal(t),
		})
	}
	return out
}

// homeDir is $HOME when set and non-empty, else the home of the current user's passwd
// entry (PROBED: HOME unset or empty reports the passwd home).
func homeDir() string {
	if h := os.Getenv("HOME"); h != "" {
		return h
	}
	return passwdHome(passwdFile, os.Getuid())
}

// passwdFile is read directly (no cgo, no NSS), as package executor does.
const passwdFile = "/etc/passwd"

func passwdHome(path string, uid int) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	want := strconv.Itoa(uid)
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Split(line, ":")
		if len(f) >= 7 && f[2] == want {
			return f[5]
		}
	}
	return ""
}
