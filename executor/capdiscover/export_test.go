package capdiscover

// Internals for the external tests.

// UTF8ErrorText is utf8ErrorText.
func UTF8ErrorText(b []byte) (string, bool) { return utf8ErrorText(b) }

// RelativePath is relativePath.
func RelativePath(p string) (rel, problem string) { return relativePath(p) }

// ManifestDecls reports what parseManifest finds: the kinds (0 none, 1 path, 2 inline) and
// declared strings of mcpServers and apps.
func ManifestDecls(contents string) (mcpKind int, mcpPath string, appsKind int, appsPath string) {
	d := parseManifest(contents)
	return int(d.mcpServers.kind), d.mcpServers.path, int(d.apps.kind), d.apps.path
}
