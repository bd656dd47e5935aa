package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"strings"

	"github.com/pelletier/go-toml/v2"
	"github.com/pelletier/go-toml/v2/unstable"
)

// The reference's configuration flags on `exec-server` (-c/--config, --enable, --disable,
// --strict-config) and $CODEX_HOME/config.toml, as observed on codex 0.171.0 and 0.169.0:
//
//   - --enable/--disable NAME: an unknown feature name fails start-up (exit 1, "Unknown
//     feature flag: NAME"), with or without --strict-config.
//   - Without --strict-config nothing else is checked: a malformed config.toml, an unknown
//     key, a -c without "=" all start the server.
//   - With --strict-config, config.toml must parse ("PATH:LINE:COL: message", exit 1), its
//     top-level keys and its [features] names must be known ("PATH:LINE:COL: unknown
//     configuration field `KEY`"), each -c must be KEY=VALUE ("Invalid override (missing
//     '='): …", "Empty key in override: …") naming a known key ("unknown configuration
//     field `KEY` in -c/--config override"), and a feature must be a boolean.
//
// None of the reference's configuration keys changes this executor's behaviour, so nothing
// beyond those checks is read. The known keys and features (codexconfig_keys.go) are those
// of 0.171.0, the newest release; 0.169.0 knows 8 fewer features. The reference also
// type-checks every known key under --strict-config; here feature values and the scalar
// top-level keys of codexConfigTypes are (nested tables, enums and value semantics such
// as "Model provider `x` not found" are not).

// codexConfigFlags are the values of the configuration flags.
type codexConfigFlags struct {
	overrides []string // -c/--config, in order
	enable    []string
	disable   []string
	strict    bool
}

// checkFeatures is the first start-up check: every --enable/--disable name is known.
func (f codexConfigFlags) checkFeatures() error {
	for _, name := range append(append([]string{}, f.enable...), f.disable...) {
		if !codexFeatures[name] {
			return fmt.Errorf("Unknown feature flag: %s", name) // the reference's text
		}
	}
	return nil
}

// codexHomeDir is $CODEX_HOME, else ~/.codex ($HOME, else the passwd entry's home), else
// "" (no CODEX_HOME: the features that keep state there are off, never a directory
// relative to the working directory).
func codexHomeDir() string {
	if h := os.Getenv("CODEX_HOME"); h != "" {
		return h
	}
	if home, err := os.UserHomeDir(); err == nil {
		return filepath.Join(home, ".codex")
	}
	if u, err := user.Current(); err == nil && filepath.IsAbs(u.HomeDir) {
		return filepath.Join(u.HomeDir, ".codex")
	}
	return ""
}

// checkStrict runs the --strict-config checks (nothing without it): config.toml under
// home, then each override.
func (f codexConfigFlags) checkStrict(home string) error {
	if !f.strict {
		return nil
	}
	path := filepath.Join(home, "config.toml")
	data, err := os.ReadFile(path)
	switch {
	case home == "", errors.Is(err, fs.ErrNotExist): // no CODEX_HOME: no file to check
	case err != nil:
		return fmt.Errorf("reading %s: %w", path, err)
	default:
		if err := checkConfigTOML(path, data); err != nil {
			return err
		}
	}
	for _, o := range f.overrides {
		if err := checkOverride(o); err != nil {
			return err
		}
	}
	return nil
}

// checkConfigTOML parses a config.toml and checks its keys (see the file comment).
func checkConfigTOML(path string, data []byte) error {
	var doc map[string]any
	if err := toml.Unmarshal(data, &doc); err != nil {
		var de *toml.DecodeError
		if errors.As(err, &de) {
			line, col := de.Position()
			return fmt.Errorf("%s:%d:%d: %s", path, line, col, err)
		}
		return fmt.Errorf("%s: %w", path, err)
	}
	var p unstable.Parser
	p.Reset(data)
	var table []string // the current [table] header's key
	for p.NextExpression() {
		e := p.Expression()
		keyNode, key := firstKeyPart(&p, e)
		switch e.Kind {
		case unstable.Table, unstable.ArrayTable:
			table = key
		case unstable.KeyValue:
			full := append(append([]string{}, table...), key...)
			if err := checkConfigKey(full, e.Value()); err != nil {
				pos := p.Shape(p.Range(keyNode.Data)).Start
				var te *configTypeError
				if errors.As(err, &te) {
					pos = p.Shape(e.Value().Raw).Start
					if e.Value().Raw.Length == 0 {
						pos = p.Shape(p.Range(e.Value().Data)).Start
					}
					return fmt.Errorf("%s:%d:%d: invalid type: %s, expected %s", path, pos.Line, pos.Column,
						tomlKindText(e.Value(), p.Raw(e.Value().Raw)), te.expected)
				}
				return fmt.Errorf("%s:%d:%d: %w", path, pos.Line, pos.Column, err)
			}
			continue
		}
		// A table header names a table: [foo] with an unknown foo is refused at the header.
		if len(key) > 0 && !codexConfigKeys[key[0]] {
			pos := p.Shape(p.Range(keyNode.Data)).Start
			return fmt.Errorf("%s:%d:%d: unknown configuration field `%s`", path, pos.Line, pos.Column, key[0])
		}
	}
	if err := p.Error(); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// firstKeyPart returns the expression's first key node and its whole dotted key.
func firstKeyPart(p *unstable.Parser, e *unstable.Node) (*unstable.Node, []string) {
	var first *unstable.Node
	var key []string
	it := e.Key()
	for it.Next() {
		n := it.Node()
		if first == nil {
			first = n
		}
		key = append(key, string(n.Data))
	}
	return first, key
}

// configTypeError is a known key whose value has the wrong TOML type.
type configTypeError struct{ expected string }

func (e *configTypeError) Error() string { return "expected " + e.expected }

// codexConfigTypes are the expected types of the scalar top-level keys, as the
// reference's --strict-config names them (observed on 0.171.0 with integer, boolean and
// string values). Keys not listed are not type-checked here.
var codexConfigTypes = map[string]string{
	"model": "a string", "review_model": "a string", "profile": "a string", "model_provider": "a string",
	"chatgpt_base_url": "a string", "openai_base_url": "a string", "experimental_realtime_ws_model": "a string",
	"service_tier": "a string", "oss_provider": "a string", "instructions": "a string",
	"developer_instructions": "a string", "compact_prompt": "a string",
	"model_instructions_file": "path string", "sqlite_home": "path string", "log_dir": "path string",
	"js_repl_node_path":    "path string",
	"hide_agent_reasoning": "a boolean", "show_raw_agent_reasoning": "a boolean",
	"check_for_update_on_startup": "a boolean", "disable_paste_burst": "a boolean",
	"allow_login_shell": "a boolean", "suppress_unstable_features_warning": "a boolean",
	"project_doc_max_bytes": "usize", "tool_output_token_limit": "usize",
	"model_context_window": "i64", "model_auto_compact_token_limit": "i64",
	"notify": "a sequence",
}

// typeMatches reports whether a value node has the expected type.
func typeMatches(expected string, v *unstable.Node) bool {
	switch expected {
	case "a string", "path string":
		return v.Kind == unstable.String
	case "a boolean":
		return v.Kind == unstable.Bool
	case "usize", "i64":
		return v.Kind == unstable.Integer
	case "a sequence":
		return v.Kind == unstable.Array
	}
	return true
}

// checkConfigKey checks one dotted key: its top-level part must be known, a feature name
// known, and a value (when val is not nil) of the expected type (*configTypeError).
func checkConfigKey(key []string, val *unstable.Node) error {
	if len(key) == 0 {
		return nil
	}
	if !codexConfigKeys[key[0]] {
		return fmt.Errorf("unknown configuration field `%s`", key[0])
	}
	if len(key) == 1 {
		if exp, ok := codexConfigTypes[key[0]]; ok && val != nil && !typeMatches(exp, val) {
			return &configTypeError{exp}
		}
		return nil
	}
	if key[0] != "features" {
		return nil
	}
	if !codexFeatures[key[1]] {
		return fmt.Errorf("unknown configuration field `features.%s`", key[1])
	}
	if len(key) == 2 && val != nil && val.Kind != unstable.Bool {
		return &configTypeError{"a boolean"}
	}
	return nil
}

// tomlKindText renders a value as serde's "invalid type" does: `integer `3“, `string "yes"`.
func tomlKindText(v *unstable.Node, raw []byte) string {
	switch v.Kind {
	case unstable.String:
		return fmt.Sprintf("string %q", string(v.Data))
	case unstable.Integer:
		return fmt.Sprintf("integer `%s`", v.Data)
	case unstable.Float:
		return fmt.Sprintf("floating point `%s`", v.Data)
	case unstable.Bool:
		return fmt.Sprintf("boolean `%s`", v.Data)
	case unstable.Array:
		return "sequence"
	case unstable.InlineTable:
		return "map"
	}
	return fmt.Sprintf("value `%s`", raw)
}

// checkOverride checks one -c KEY=VALUE under --strict-config.
func checkOverride(o string) error {
	k, v, ok := strings.Cut(o, "=")
	if !ok {
		return fmt.Errorf("Invalid override (missing '='): %s", o) // the reference's text
	}
	k = strings.TrimSpace(k)
	if k == "" {
		return fmt.Errorf("Empty key in override: %s", o) // the reference's text
	}
	key := strings.Split(k, ".")
	// The value is TOML when it parses as one, else a literal string.
	var p unstable.Parser
	doc := []byte("v = " + strings.TrimSpace(v) + "\n")
	p.Reset(doc)
	var val *unstable.Node
	if p.NextExpression() && p.Error() == nil {
		if e := p.Expression(); e.Kind == unstable.KeyValue {
			val = e.Value()
		}
	}
	if val == nil || p.Error() != nil {
		val = &unstable.Node{Kind: unstable.String, Data: []byte(v)}
	}
	err := checkConfigKey(key, val)
	var te *configTypeError
	switch {
	case errors.As(err, &te):
		return fmt.Errorf("invalid type: %s, expected %s\nin `%s`", tomlKindText(val, val.Data), te.expected, key[0])
	case err != nil:
		return fmt.Errorf("%w in -c/--config override", err)
	}
	return nil
}
