package capdiscover

// The per-root scan (spec/capabilities-0.171.0.md §4.2), run in-process or inside the
// sandboxed helper. Order of work, which is also the order of warnings:
//
//	1. stat the root (error → the root's error, nothing else)
//	2. walk it (fs/walk engine): walk errors, then the truncation warning
//	3. the root's own manifest (priority list)
//	4. namespace manifests: the root's, else the nearest ancestor's; then every plugin
//	   found by the walk, by plugin root URI
//	5. the plugin's MCP and apps files (only with a root manifest)
//	6. skills, by SKILL.md URI, each with its agents/openai.yaml

import (
	"context"
	"os"
	"path"
	"sort"
	"strings"

	"github.com/execlab/executor/executor/fs"
	"github.com/execlab/executor/executor/protocol"
	"github.com/execlab/executor/internal/oserr"
)

// rootScan is the outcome of scanning one root: the result members except id and path.
// It is also the sandboxed helper's result document.
type rootScan struct {
	Plugin             *protocol.CapabilityPlugin `json:"plugin"`
	Skills             []protocol.CapabilitySkill `json:"skills"`
	NamespaceManifests []protocol.CapabilityFile  `json:"namespaceManifests"`
	Warnings           []string                   `json:"warnings"`
	Error              *string                    `json:"error"`
	// Absent (discoverV2 only): the location is missing, not a directory or not
	// accessible, so it contributes nothing, not even a warning.
	Absent bool `json:"absent,omitempty"`
}

func emptyScan() *rootScan {
	return &rootScan{Skills: []protocol.CapabilitySkill{}, NamespaceManifests: []protocol.CapabilityFile{},
		Warnings: []string{}}
}

func failedScan(msg string) *rootScan {
	s := emptyScan()
	s.Error = &msg
	return s
}

// scanRoot scans the root at uri with the process's own view of the filesystem (the
// helper's sandboxed one inside the helper). denyGlobs are re-checked on every file read.
func scanRoot(ctx context.Context, walker *fs.Service, uri protocol.PathURI, denyGlobs []string) *rootScan {
	native, err := uri.Native()
	if err != nil {
		return failedScan("failed to inspect capability root " + string(uri) + ": " + err.Error())
	}
	st, err := os.Stat(native)
	if err != nil {
		return failedScan("failed to inspect capability root " + string(uri) + ": " + oserr.Text(err))
	}
	if !st.IsDir() {
		return failedScan("capability root " + string(uri) + " is not a directory")
	}
	s := &scan{root: native, rootURI: string(uri), rd: reader{denyGlobs: denyGlobs, warnings: []string{}}}
	if err := s.walk(ctx, walker, uri); err != nil {
		return failedScan("failed to inspect capability root " + string(uri) + ": " + err.Error())
	}
	out := emptyScan()
	manifest, hasManifest := s.manifestIn(s.root, s.rootURI)
	if hasManifest {
		out.NamespaceManifests = append(out.NamespaceManifests, manifest)
	} else if m, ok := s.ancestorManifest(); ok {
		out.NamespaceManifests = append(out.NamespaceManifests, m)
	}
	skip := ""
	if hasManifest {
		skip = s.rootURI
	}
	out.NamespaceManifests = append(out.NamespaceManifests, s.walkedManifests(skip)...)
	if hasManifest {
		out.Plugin = s.plugin(manifest)
	}
	out.Skills = s.skills()
	out.Warnings = s.rd.warnings
	return out
}

// scan is the state of one root's scan; one goroutine uses it.
type scan struct {
	root    string // native path of the root
	rootURI string
	rd      reader
	// skillURIs are the walked files named SKILL.md; manifestURIs the walked files
	// named plugin.json in a manifest directory.
	skillURIs    []string
	manifestURIs []string
}

// walk runs the fs/walk engine over the root and keeps the files discovery looks at;
// walk errors and truncation become warnings.
func (s *scan) walk(ctx context.Context, walker *fs.Service, uri protocol.PathURI) error {
	res, err := walker.Walk(ctx, &protocol.FsWalkParams{Path: uri, Options: protocol.FsWalkOptions{
		MaxDepth: MaxWalkDepth, MaxDirectories: MaxWalkDirectories, MaxEntries: MaxWalkEntries,
		FollowDirectorySymlinks: true, PruneHiddenDirectories: false,
	}})
	if err != nil {
		return err
	}
	for _, e := range res.Errors {
		s.rd.warn("failed to scan capability path %s: %s", e.Path, e.Message)
	}
	if res.Truncated {
		s.rd.warn("capability scan reached its traversal limit (root: %s)", s.rootURI)
	}
	for _, e := range res.Entries {
		if e.Kind != protocol.FsWalkKindFile {
			continue
		}
		u := string(e.Path)
		dir, name := path.Split(u)
		switch name {
		case skillFileName:
			s.skillURIs = append(s.skillURIs, u)
		case manifestFileName:
			if isManifestDir(path.Base(strings.TrimSuffix(dir, "/"))) {
				s.manifestURIs = append(s.manifestURIs, u)
			}
		}
	}
	return nil
}

func isManifestDir(name string) bool {
	for _, d := range manifestDirs {
		if name == d {
			return true
		}
	}
	return false
}

// uriDir strips the last segment of a URI (path.Dir would clean the "//" of file:///).
func uriDir(u string) string { return u[:strings.LastIndexByte(u, '/')] }

// joinURI appends a relative path of plain segments to a directory URI.
func joinURI(dirURI, rel string) string {
	if strings.HasSuffix(dirURI, "/") {
		return dirURI + rel
	}
	return dirURI + "/" + rel
}

func joinNative(dir, rel string) string {
	if dir == "/" {
		return "/" + rel
	}
	return dir + "/" + rel
}

// manifestIn returns the first readable manifest of the directory dir (priority order).
func (s *scan) manifestIn(dir, dirURI string) (protocol.CapabilityFile, bool) {
	for _, d := range manifestDirs {
		rel := d + "/" + manifestFileName
		if f, ok := s.rd.read(joinNative(dir, rel), joinURI(dirURI, rel)); ok {
			return f, true
		}
	}
	return protocol.CapabilityFile{}, false
}

// ancestorManifest returns the manifest of the nearest ancestor of the root, up to "/",
// that has one. (The root's own candidates were read already; a walked manifest of the
// root is read again by walkedManifests, observed from codex 0.171.0: a non-UTF-8 root
// manifest warns twice, an inaccessible root's candidates once.)
func (s *scan) ancestorManifest() (protocol.CapabilityFile, bool) {
	for dir := s.root; ; {
		parent := path.Dir(dir)
		if parent == dir {
			return protocol.CapabilityFile{}, false
		}
		dir = parent
		if f, ok := s.manifestIn(dir, string(protocol.FromNative(dir))); ok {
			return f, true
		}
	}
}

// walkedManifests returns, per plugin root found by the walk (the manifest's
// grandparent) other than skip (the capability root when it has its own manifest), the
// first readable manifest in priority order, ordered by plugin root URI.
func (s *scan) walkedManifests(skip string) []protocol.CapabilityFile {
	type candidate struct {
		pluginRoot string
		prio       int
		uri        string
	}
	var cands []candidate
	for _, u := range s.manifestURIs {
		dir := uriDir(u) // …/.codex-plugin
		pr := uriDir(dir)
		if skip != "" && (pr == skip || pr+"/" == skip) {
			continue
		}
		prio := 0
		for i, d := range manifestDirs {
			if dir[strings.LastIndexByte(dir, '/')+1:] == d {
				prio = i
			}
		}
		cands = append(cands, candidate{pr, prio, u})
	}
	sort.Slice(cands, func(i, j int) bool {
		if cands[i].pluginRoot != cands[j].pluginRoot {
			return cands[i].pluginRoot < cands[j].pluginRoot
		}
		return cands[i].prio < cands[j].prio
	})
	var out []protocol.CapabilityFile
	done := ""
	for _, c := range cands {
		if c.pluginRoot == done {
			continue
		}
		native, err := protocol.PathURI(c.uri).Native()
		if err != nil {
			continue
		}
		if f, ok := s.rd.read(native, c.uri); ok {
			out = append(out, f)
			done = c.pluginRoot
		}
	}
	return out
}

// plugin builds the root's plugin from its manifest: the MCP configuration (declared
// path, none when inline, else .mcp.json) and the apps configuration (declared path only).
func (s *scan) plugin(manifest protocol.CapabilityFile) *protocol.CapabilityPlugin {
	p := &protocol.CapabilityPlugin{Manifest: manifest}
	d := parseManifest(manifest.Contents)
	mcpRel := mcpFallbackRel
	switch d.mcpServers.kind {
	case declInline:
		mcpRel = ""
	case declPath:
		if rel, problem := relativePath(d.mcpServers.path); problem != "" {
			s.rd.warn("ignoring mcpServers in %s: %s", manifest.Path, problem)
		} else {
			mcpRel = rel
		}
	}
	appsRel := ""
	if d.apps.kind == declPath {
		if rel, problem := relativePath(d.apps.path); problem != "" {
			s.rd.warn("ignoring apps in %s: %s", manifest.Path, problem)
		} else {
			appsRel = rel
		}
	}
	if mcpRel != "" {
		p.MCPConfig = s.readRel(mcpRel)
	}
	if appsRel != "" {
		p.AppsConfig = s.readRel(appsRel)
	}
	return p
}

// readRel reads a file at a validated relative path below the root.
func (s *scan) readRel(rel string) *protocol.CapabilityFile {
	native := path.Join(s.root, rel)
	if f, ok := s.rd.read(native, string(protocol.FromNative(native))); ok {
		return &f
	}
	return nil
}

// skills reads every walked SKILL.md in URI order, each with its sibling
// agents/openai.yaml.
func (s *scan) skills() []protocol.CapabilitySkill {
	sort.Strings(s.skillURIs)
	out := []protocol.CapabilitySkill{}
	for _, u := range s.skillURIs {
		native, err := protocol.PathURI(u).Native()
		if err != nil {
			continue
		}
		f, ok := s.rd.read(native, u)
		if !ok {
			continue
		}
		sk := protocol.CapabilitySkill{Instructions: f}
		dir, dirURI := path.Dir(native), uriDir(u)
		if m, ok := s.rd.read(joinNative(dir, skillMetadataRel), joinURI(dirURI, skillMetadataRel)); ok {
			sk.Metadata = &m
		}
		out = append(out, sk)
	}
	return out
}
