package capdiscover

// Installed plugins: $CODEX_HOME/plugins/cache/<marketplace>/<plugin>/<version>/
// (spec/capabilities-0.171.0.md §5). Each plugin directory contributes its active
// version: "local" when present, else the greatest name, comparing two names as semver
// versions when both parse and as strings otherwise (PROBED: 10.0.0 > 9.0.0,
// 10.0.0-beta > 2.0.0, 1.0.0+b > 1.0.0, but "9" > "10", "b" > "a" > "1.0.0", "v1" >
// "0.5.0"). Names that are not directories, not UTF-8, or hold a character other than
// ASCII letters, digits, '-', '_' and '.' are ignored, as are "." and ".."; marketplace
// and plugin names starting with '.' are ignored too (PROBED: ".b5" skipped, a version
// ".1" accepted). Symlinked marketplace and plugin directories count, symlinked version
// directories do not, and a marketplace reached twice (a symlink to another
// marketplace) counts once, under its first name in sorted order (PROBED). The version
// directory is then scanned as one capability root; a version without a readable
// manifest is a warning (PROBED: "local" without manifest).

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// pluginLocation is one installed plugin's active version.
type pluginLocation struct {
	marketplace, name, version string
	root                       string // native path of the version directory
}

func (p *pluginLocation) id() string { return p.name + pluginIDSeparator + p.marketplace }

// installedPlugins lists the active version of every plugin in the cache under
// codexHome, sorted by marketplace then plugin name. A missing cache is empty.
func installedPlugins(codexHome string) []pluginLocation {
	cache := filepath.Join(codexHome, pluginCacheRel)
	var out []pluginLocation
	seen := map[string]bool{} // canonical marketplace directories
	for _, m := range subdirs(cache, true, true) {
		canon, err := filepath.EvalSymlinks(filepath.Join(cache, m))
		if err != nil || seen[canon] {
			continue
		}
		seen[canon] = true
		for _, p := range subdirs(filepath.Join(cache, m), true, true) {
			if v, ok := activeVersion(subdirs(filepath.Join(cache, m, p), false, false)); ok {
				out = append(out, pluginLocation{marketplace: m, name: p, version: v, root: filepath.Join(cache, m, p, v)})
			}
		}
	}
	return out
}

// subdirs lists the valid directory names in dir, sorted; noDot also refuses names that
// start with '.'; followLinks counts a symlink to a directory as a directory (PROBED:
// symlinked marketplaces and plugins count, symlinked version directories do not).
func subdirs(dir string, noDot, followLinks bool) []string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		name := e.Name()
		if !validSegment(name) || noDot && strings.HasPrefix(name, ".") {
			continue
		}
		isDir := e.IsDir()
		if followLinks && e.Type()&os.ModeSymlink != 0 {
			if st, err := os.Stat(filepath.Join(dir, name)); err == nil {
				isDir = st.IsDir()
			}
		}
		if isDir {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

// validSegment: non-empty UTF-8, not "." or "..", only [A-Za-z0-9._-].
func validSegment(s string) bool {
	if s == "" || s == "." || s == ".." || !utf8.ValidString(s) {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}

// activeVersion picks the active version among names (see the file comment).
func activeVersion(names []string) (string, bool) {
	if len(names) == 0 {
		return "", false
	}
	best := names[0]
	for _, n := range names {
		if n == localPluginVersion {
			return n, true
		}
		if compareVersions(n, best) > 0 {
			best = n
		}
	}
	return best, true
}

// compareVersions compares two version directory names: as semver when both parse,
// else as strings. (Mixed sets can be intransitive; the reference sorts with the same
// comparison, so such sets may pick differently — unprobed.)
func compareVersions(a, b string) int {
	va, okA := parseSemver(a)
	vb, okB := parseSemver(b)
	if okA && okB {
		return va.compare(vb)
	}
	return strings.Compare(a, b)
}

// semver is a SemVer 2.0.0 version as Rust's semver crate parses it.
type semver struct {
	major, minor, patch uint64
	pre, build          []string
}

// parseSemver parses MAJOR.MINOR.PATCH[-PRE][+BUILD] strictly: numbers without leading
// zeros, identifiers of [0-9A-Za-z-], numeric pre-release identifiers without leading
// zeros.
func parseSemver(s string) (semver, bool) {
	var v semver
	core, build, hasBuild := strings.Cut(s, "+")
	core, pre, hasPre := strings.Cut(core, "-")
	parts := strings.Split(core, ".")
	if len(parts) != 3 {
		return v, false
	}
	nums := [3]*uint64{&v.major, &v.minor, &v.patch}
	for i, p := range parts {
		n, ok := semverNumber(p)
		if !ok {
			return v, false
		}
		*nums[i] = n
	}
	if hasPre {
		if v.pre = strings.Split(pre, "."); !semverIdents(v.pre, true) {
			return v, false
		}
	}
	if hasBuild {
		if v.build = strings.Split(build, "."); !semverIdents(v.build, false) {
			return v, false
		}
	}
	return v, true
}

func semverNumber(p string) (uint64, bool) {
	if p == "" || len(p) > 1 && p[0] == '0' {
		return 0, false
	}
	for i := 0; i < len(p); i++ {
		if p[i] < '0' || p[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseUint(p, 10, 64)
	return n, err == nil
}

func semverIdents(ids []string, pre bool) bool {
	for _, id := range ids {
		if id == "" {
			return false
		}
		numeric := true
		for i := 0; i < len(id); i++ {
			c := id[i]
			switch {
			case c >= '0' && c <= '9':
			case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '-':
				numeric = false
			default:
				return false
			}
		}
		if pre && numeric && len(id) > 1 && id[0] == '0' {
			return false
		}
	}
	return true
}

// compare orders by major, minor, patch, then pre-release (none > any), then build
// metadata (none < any), as the semver crate's Ord does.
func (v semver) compare(o semver) int {
	for _, d := range [3][2]uint64{{v.major, o.major}, {v.minor, o.minor}, {v.patch, o.patch}} {
		if d[0] != d[1] {
			if d[0] < d[1] {
				return -1
			}
			return 1
		}
	}
	switch {
	case len(v.pre) == 0 && len(o.pre) != 0:
		return 1
	case len(v.pre) != 0 && len(o.pre) == 0:
		return -1
	}
	if c := compareIdents(v.pre, o.pre); c != 0 {
		return c
	}
	return compareIdents(v.build, o.build)
}

// compareIdents compares dot-separated identifiers: numeric ones numerically and below
// alphanumeric ones, others as strings; a shorter list that is a prefix is smaller.
func compareIdents(a, b []string) int {
	for i := 0; i < len(a) && i < len(b); i++ {
		na, errA := strconv.ParseUint(a[i], 10, 64)
		nb, errB := strconv.ParseUint(b[i], 10, 64)
		switch {
		case errA == nil && errB == nil:
			if na != nb {
				if na < nb {
					return -1
				}
				return 1
			}
		case errA == nil:
			return -1
		case errB == nil:
			return 1
		default:
			if c := strings.Compare(a[i], b[i]); c != 0 {
				return c
			}
		}
	}
	return len(a) - len(b)
}

// pluginManifestMeta is what discoverV2 reads from a plugin's manifest.
type pluginManifestMeta struct {
	name        string
	displayName string // interface.displayName, "" when absent
}

// parsePluginManifest decodes a manifest as the reference's PluginManifestMetadata
// (PROBED): a JSON object (no trailing data) whose "name", if present, is a string (null
// refused) and whose "interface", if present and not null, is an object whose
// "displayName" is a string or null; a repeated name or interface key is an error, other
// members are not checked.
func parsePluginManifest(contents string) (pluginManifestMeta, bool) {
	var meta pluginManifestMeta
	members, ok := jsonObjectMembers([]byte(contents), "name", "interface")
	if !ok {
		return meta, false
	}
	if raw, present := members["name"]; present {
		if json.Unmarshal(raw, &meta.name) != nil || string(raw) == "null" {
			return meta, false
		}
	}
	if raw, present := members["interface"]; present && string(raw) != "null" {
		iface, ok := jsonObjectMembers(raw, "displayName")
		if !ok {
			return meta, false
		}
		if dn, present := iface["displayName"]; present && string(dn) != "null" {
			if json.Unmarshal(dn, &meta.displayName) != nil {
				return meta, false
			}
		}
	}
	return meta, true
}

// jsonObjectMembers decodes data as one JSON object and returns the raw values of the
// wanted keys; false when data is not exactly one object or a wanted key repeats.
func jsonObjectMembers(data []byte, wanted ...string) (map[string]json.RawMessage, bool) {
	var obj map[string]json.RawMessage
	if json.Unmarshal(data, &obj) != nil || obj == nil {
		return nil, false
	}
	// encoding/json keeps the last of repeated keys; serde refuses a repeated field.
	dec := json.NewDecoder(strings.NewReader(string(data)))
	seen := map[string]bool{}
	if _, err := dec.Token(); err != nil {
		return nil, false
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, false
		}
		key, _ := t.(string)
		if contains(wanted, key) {
			if seen[key] {
				return nil, false
			}
			seen[key] = true
		}
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			return nil, false
		}
	}
	out := make(map[string]json.RawMessage, len(wanted))
	for _, k := range wanted {
		if v, ok := obj[k]; ok {
			out[k] = v
		}
	}
	return out, true
}

// displayNameOf is interface.displayName, else the name, else the root's base name,
// each trimmed (PROBED).
func displayNameOf(meta pluginManifestMeta, root string) string {
	if d := strings.TrimSpace(meta.displayName); d != "" {
		return d
	}
	if n := strings.TrimSpace(meta.name); n != "" {
		return n
	}
	return filepath.Base(root)
}

func runeCount(s string) int { return utf8.RuneCountInString(s) }
