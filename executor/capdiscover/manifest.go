package capdiscover

// Plugin manifest declarations (spec/capabilities-0.171.0.md §4.2 step 6). A manifest's
// contents are returned as they are, valid JSON or not; only the root's own manifest is
// parsed, for two optional members:
//
//	{"mcpServers": "./mcp/servers.json" | {…inline…} | other,
//	 "apps":       "./apps.json"        | other}
//
// A string is a path relative to the capability root; it must start with "./", and the
// rest must be non-empty, free of ".." components (split on '/' and '\') and not absolute.

import (
	"encoding/json"
	"strings"
)

// declKind says what a manifest declares for one member.
type declKind uint8

const (
	declNone   declKind = iota // absent, not a string or object, or the manifest is not a JSON object
	declPath                   // a string: a path below the root (valid or not)
	declInline                 // an object (mcpServers only): no file is read
)

// declaration is one member of a manifest.
type declaration struct {
	kind declKind
	path string // the declared string, for declPath
}

// manifestDecls are the members discovery reads from a root manifest.
type manifestDecls struct {
	mcpServers declaration
	apps       declaration
}

// parseManifest extracts the declarations of contents; a manifest that is not a JSON
// object declares nothing.
func parseManifest(contents string) manifestDecls {
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(contents), &m); err != nil {
		return manifestDecls{}
	}
	return manifestDecls{mcpServers: member(m["mcpServers"], true), apps: member(m["apps"], false)}
}

func member(raw json.RawMessage, inlineOK bool) declaration {
	if len(raw) == 0 {
		return declaration{}
	}
	switch raw[0] {
	case '"':
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return declaration{}
		}
		return declaration{kind: declPath, path: s}
	case '{':
		if inlineOK {
			return declaration{kind: declInline}
		}
	}
	return declaration{}
}

// Declared-path problems, as the warning texts name them.
const (
	pathNeedsDotSlash = "path must start with `./`"
	pathEscapesRoot   = "path must remain below the capability root"
)

// relativePath validates a declared path and returns the part below the root, or the
// problem text.
func relativePath(p string) (rel, problem string) {
	rest, ok := strings.CutPrefix(p, "./")
	if !ok {
		return "", pathNeedsDotSlash
	}
	if rest == "" || strings.HasPrefix(rest, "/") || strings.HasPrefix(rest, `\`) {
		return "", pathEscapesRoot
	}
	for _, c := range strings.FieldsFunc(rest, func(r rune) bool { return r == '/' || r == '\\' }) {
		if c == ".." {
			return "", pathEscapesRoot
		}
	}
	return rest, ""
}
