package capdiscover

// Internals for the external tests.

// RelativePath is relativePath.
func RelativePath(p string) (rel, problem string) { return relativePath(p) }

// ManifestDecls reports what parseManifest finds: the kinds (0 none, 1 path, 2 inline) and
// declared strings of mcpServers and apps.
func ManifestDecls(contents string) (mcpKind int, mcpPath string, appsKind int, appsPath string) {
	d := parseManifest(contents)
	return int(d.mcpServers.kind), d.mcpServers.path, int(d.apps.kind), d.apps.path
}

// FrontMatter is parseSkillFrontMatter: name, description, short description ("" and
// hasShort false when null), or ok false when the skill is refused.
func FrontMatter(contents, defaultName string) (name, desc, short string, hasShort, ok bool) {
	fm, err := parseSkillFrontMatter(contents, defaultName)
	if err != nil {
		return "", "", "", false, false
	}
	if fm.ShortDescription != nil {
		short, hasShort = *fm.ShortDescription, true
	}
	return fm.Name, fm.Description, short, hasShort, true
}

// Sidecar is parseSidecar.
var Sidecar = parseSidecar

// CompareVersions is compareVersions.
var CompareVersions = compareVersions

// ActiveVersion is activeVersion.
var ActiveVersion = activeVersion

// PluginManifest is parsePluginManifest: the name, the display name for a root named
// rootBase, and whether the manifest is valid.
func PluginManifest(contents, root string) (name, display string, ok bool) {
	m, ok := parsePluginManifest(contents)
	return m.name, displayNameOf(m, root), ok
}
