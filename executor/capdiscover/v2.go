package capdiscover

// capabilities/discoverV2 (spec/capabilities-0.171.0.md §5): the executor's own skills
// and installed plugins, parsed. Every location is scanned as one discoverV1 root (the
// same walk, manifest priority, limits and sandboxed helper), then interpreted:
//
//	location (in this order)                   result
//	$CODEX_HOME/plugins/cache/<m>/<p>/<v>      one plugin "<p>@<m>" with its skills
//	$CODEX_HOME/skills                         skills, discoveryRoot "codex-home-skills"
//	$HOME/.agents/skills                       skills, discoveryRoot "user-agent-skills"
//
// A location that is missing, not a directory or not accessible contributes nothing. A
// location whose scan warned (V1 warnings, a skill without valid front matter, a plugin
// without a readable or valid manifest, a qualified name too long) contributes its valid
// part and exactly one warning, warnMetadata. Skills come in location order, each
// location's by SKILL.md URI; plugins are sorted by id, then root. A skill below a
// plugin manifest (the nearest of the V1 namespace manifests) is named
// "<manifest name>:<name>".

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"

	"github.com/execlab/executor/executor/fs"
	"github.com/execlab/executor/executor/protocol"
	"github.com/execlab/executor/internal/oserr"
	"github.com/execlab/executor/jsonwire"
	"github.com/execlab/executor/sandbox/policy"
)

// Homes are the directories discoverV2 looks in. The zero value finds nothing.
type Homes struct {
	// CodexHome is $CODEX_HOME (native, absolute; "" disables its locations).
	CodexHome string
	// Home is the user's home directory (native, absolute; "" disables
	// $HOME/.agents/skills).
	Home string
}

// location is one place discoverV2 scans.
type location struct {
	root   string // native
	id     string // discoveryRoot id; "" for a plugin
	plugin *pluginLocation
}

// locations lists the locations that exist as directories (with the executor's own
// view: observed from codex 0.171.0, a request whose sandbox cannot be prepared still
// succeeds when there is no location at all).
func (h Homes) locations() []location {
	var out []location
	// Plugins come first (observed from codex 0.171.0: at the MaxCapabilities budget a
	// plugin is kept and the skills of $CODEX_HOME/skills are cut).
	if h.CodexHome != "" {
		for _, p := range installedPlugins(h.CodexHome) {
			out = append(out, location{root: p.root, plugin: &p})
		}
	}
	if h.CodexHome != "" && isDir(filepath.Join(h.CodexHome, codexHomeSkillsRel)) {
		out = append(out, location{root: filepath.Join(h.CodexHome, codexHomeSkillsRel), id: codexHomeSkillsID})
	}
	if h.Home != "" && isDir(filepath.Join(h.Home, userAgentSkillsRel)) {
		out = append(out, location{root: filepath.Join(h.Home, userAgentSkillsRel), id: userAgentSkillsID})
	}
	return out
}

func isDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}

// locationHelperMethod runs one location's scan in the sandboxed fs helper.
const locationHelperMethod = "capabilities/scanLocation"

func init() {
	fs.RegisterHelperMethod(locationHelperMethod, helperScan(scanLocation))
}

// scanLocation scans one location as a V1 root; a location that is missing, not a
// directory or not accessible is empty, any other failure to inspect it a warning.
func scanLocation(ctx context.Context, walker *fs.Service, uri protocol.PathURI, denyGlobs []string) *rootScan {
	absent := emptyScan()
	absent.Absent = true
	native, err := uri.Native()
	if err != nil {
		return absent
	}
	st, err := os.Stat(native)
	switch {
	case errors.Is(err, syscall.ENOENT) || errors.Is(err, syscall.EACCES) || errors.Is(err, syscall.EPERM) || errors.Is(err, syscall.ENOTDIR):
		return absent
	case err != nil:
		s := emptyScan()
		s.Warnings = append(s.Warnings, "could not inspect capability root "+string(uri)+": "+oserr.Text(err))
		return s
	case !st.IsDir():
		return absent
	}
	return scanRoot(ctx, walker, uri, denyGlobs)
}

// DiscoverV2 serves capabilities/discoverV2 for the locations of h. A sandbox that fails
// to resolve with -32602 fails the request; any other resolution failure makes every
// location a warning. ctx cancellation stops walks early and kills helpers.
func (s *Service) DiscoverV2(ctx context.Context, p *protocol.DiscoverV2Params, h Homes) (*protocol.DiscoverV2Result, error) {
	locs := h.locations()
	pl, err := s.planV2(p.Sandbox, len(locs) > 0)
	if err != nil {
		return nil, err
	}
	parsed := make([]locationResult, len(locs))
	sem := make(chan struct{}, MaxConcurrentRoots)
	var wg sync.WaitGroup
	for i := range locs {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			parsed[i] = parseLocation(&locs[i], s.scanLocationPlanned(ctx, &locs[i], pl))
		})
	}
	wg.Wait()
	return assemble(parsed), nil
}

// planV2 resolves the request's sandbox as fs/* read operations resolve theirs, only when
// there is a location to scan. A resolution error fails the request with its code;
// windowsSandboxLevel "mxc" with a profile that needs a sandbox is -32603 mxcUnavailable
// (observed from codex 0.171.0; a disabled or unrestricted profile ignores the level).
func (s *Service) planV2(sb *protocol.DiscoverSandbox, needed bool) (rootPlan, error) {
	if sb == nil || !needed {
		return rootPlan{}, nil
	}
	c := sb.Context
	mxc := c.WindowsSandboxLevel == policy.WindowsSandboxLevel("mxc")
	if mxc {
		c.WindowsSandboxLevel = policy.WindowsSandboxLevel("disabled")
	}
	pol, err := s.fs.ResolveSandbox(&c, true)
	switch {
	case err != nil:
		return rootPlan{}, err
	case pol != nil && mxc:
		return rootPlan{}, jsonwire.Internal("%s", mxcUnavailable)
	}
	return rootPlan{pol: pol}, nil
}

// scanLocationPlanned scans one location in-process or in the helper, as planned.
func (s *Service) scanLocationPlanned(ctx context.Context, loc *location, pl rootPlan) *rootScan {
	uri := protocol.FromNative(loc.root)
	if pl.pol == nil {
		return scanLocation(ctx, s.fs, uri, nil)
	}
	raw, err := s.fs.RunHelper(ctx, pl.pol, locationHelperMethod, &helperParams{Path: uri})
	var sc rootScan
	if err == nil {
		err = json.Unmarshal(raw, &sc)
	}
	if err != nil {
		out := emptyScan()
		out.Warnings = append(out.Warnings, "could not inspect capability root "+string(uri)+": "+errorText(err))
		return out
	}
	return &sc
}

// locationResult is one location's contribution.
type locationResult struct {
	plugin *protocol.ExecutorPlugin
	skills []protocol.ExecutorSkill
	warned bool
}

// parseLocation interprets a location's V1 scan.
func parseLocation(loc *location, sc *rootScan) locationResult {
	if sc.Absent {
		return locationResult{}
	}
	warned := len(sc.Warnings) > 0 || sc.Error != nil
	var meta pluginManifestMeta
	if loc.plugin != nil {
		ok := sc.Plugin != nil
		if ok {
			meta, ok = parsePluginManifest(sc.Plugin.Manifest.Contents)
		}
		if !ok {
			return locationResult{warned: true}
		}
	}
	namespaces := namespaceRoots(sc.NamespaceManifests)
	skills := []protocol.ExecutorSkill{}
	for _, sk := range sc.Skills {
		native, err := sk.Instructions.Path.Native()
		if err != nil {
			warned = true
			continue
		}
		fm, err := parseSkillFrontMatter(sk.Instructions.Contents, defaultNameFor(native))
		if err != nil {
			warned = true
			continue
		}
		name := fm.Name
		if ns, ok := nearestNamespace(namespaces, native); ok {
			if runeCount(ns)+1+runeCount(name) > MaxQualifiedNameChars {
				warned = true
				continue
			}
			name = ns + ":" + name
		}
		out := protocol.ExecutorSkill{Name: name, Description: fm.Description, ShortDescription: fm.ShortDescription,
			Path: sk.Instructions.Path}
		if loc.plugin == nil {
			out.DiscoveryRoot = &protocol.SkillDiscoveryRoot{ID: loc.id, Path: protocol.FromNative(loc.root)}
		}
		if sk.Metadata != nil {
			out.Policy, out.Dependencies = parseSidecar(sk.Metadata.Contents)
		}
		skills = append(skills, out)
	}
	if loc.plugin == nil {
		return locationResult{skills: skills, warned: warned}
	}
	return locationResult{warned: warned, plugin: &protocol.ExecutorPlugin{
		ID: loc.plugin.id(), DisplayName: displayNameOf(meta, loc.root), Version: loc.plugin.version,
		Root: protocol.FromNative(loc.root), Files: *sc.Plugin, Skills: skills,
	}}
}

// defaultNameFor is the skill directory's name collapsed to one line, else "skill".
func defaultNameFor(skillFile string) string {
	if n := singleLine(path.Base(path.Dir(skillFile))); n != "" && n != "/" && n != "." {
		return n
	}
	return defaultSkillName
}

// namespaceRoots maps each plugin root (a namespace manifest's grandparent, native) to
// its namespace: the manifest's "name" unless blank, else the root's base name. A
// manifest that is not an object with a string name (or none) names nothing; the first
// manifest of a root wins.
func namespaceRoots(manifests []protocol.CapabilityFile) map[string]string {
	out := map[string]string{}
	for _, m := range manifests {
		native, err := m.Path.Native()
		if err != nil {
			continue
		}
		root := path.Dir(path.Dir(native))
		members, ok := jsonObjectMembers([]byte(m.Contents), "name")
		if !ok {
			continue
		}
		var name string
		if raw, present := members["name"]; present {
			if string(raw) == "null" || json.Unmarshal(raw, &name) != nil {
				continue
			}
		}
		if strings.TrimSpace(name) == "" {
			if name = path.Base(root); name == "/" {
				continue
			}
		}
		if _, dup := out[root]; !dup {
			out[root] = name
		}
	}
	return out
}

// nearestNamespace finds the namespace of the closest ancestor directory of file.
func nearestNamespace(namespaces map[string]string, file string) (string, bool) {
	if len(namespaces) == 0 {
		return "", false
	}
	for dir := path.Dir(file); ; dir = path.Dir(dir) {
		if ns, ok := namespaces[dir]; ok {
			return ns, true
		}
		if dir == "/" || dir == "." {
			return "", false
		}
	}
}

// assemble builds the response from the locations' results in order, within the
// response budget (MaxCapabilities, MaxResponseBytes, MaxWarnings): a plugin counts 1 plus
// its skills and may lose trailing skills to fit; what does not fit is dropped and the
// response starts with warnSizeLimit (observed from codex 0.171.0 for the capability and
// byte limits and MaxWarnings).
func assemble(results []locationResult) *protocol.DiscoverV2Result {
	out := &protocol.DiscoverV2Result{Plugins: []protocol.ExecutorPlugin{}, Skills: []protocol.ExecutorSkill{}, Warnings: []string{}}
	var b budget
	for i, r := range results {
		if r.warned && len(out.Warnings) < MaxWarnings {
			out.Warnings = append(out.Warnings, warnMetadata)
		}
		switch {
		case r.plugin != nil:
			remaining := MaxCapabilities - b.capabilities
			if remaining == 0 {
				b.truncated = true
				break
			}
			p := *r.plugin
			if len(p.Skills) > remaining-1 {
				b.truncated = true
				p.Skills = p.Skills[:remaining-1]
			}
			if b.admit(1+len(p.Skills), encodedLen(&p)) {
				out.Plugins = append(out.Plugins, p)
			}
		default:
			for j := range r.skills {
				if b.capabilities == MaxCapabilities {
					b.truncated = true
					break
				}
				if b.admit(1, encodedLen(&r.skills[j])) {
					out.Skills = append(out.Skills, r.skills[j])
				}
			}
		}
		if (b.capabilities == MaxCapabilities || b.bytes == MaxResponseBytes) && i+1 < len(results) {
			b.truncated = true
			break
		}
	}
	sort.SliceStable(out.Plugins, func(i, j int) bool {
		if out.Plugins[i].ID != out.Plugins[j].ID {
			return out.Plugins[i].ID < out.Plugins[j].ID
		}
		return out.Plugins[i].Root < out.Plugins[j].Root
	})
	if b.truncated || encodedLen(out) > MaxResponseBytes {
		if len(out.Warnings) > MaxWarnings-1 {
			out.Warnings = out.Warnings[:MaxWarnings-1]
		}
		out.Warnings = append([]string{warnSizeLimit}, out.Warnings...)
		for encodedLen(out) > MaxResponseBytes {
			switch {
			case len(out.Warnings) > 1:
				out.Warnings = out.Warnings[:1]
			case len(out.Skills) > 0:
				out.Skills = out.Skills[:len(out.Skills)-1]
			case len(out.Plugins) > 0:
				out.Plugins = out.Plugins[:len(out.Plugins)-1]
			default:
				return out
			}
		}
	}
	return out
}

// budget counts what the response holds so far.
type budget struct {
	capabilities, bytes int
	truncated           bool
}

func (b *budget) admit(capabilities, bytes int) bool {
	if b.capabilities+capabilities > MaxCapabilities || b.bytes+bytes > MaxResponseBytes {
		b.truncated = true
		return false
	}
	b.capabilities += capabilities
	b.bytes += bytes
	return true
}

// encodedLen is the length of v's JSON encoding (HTML characters unescaped, as serde
// writes them).
func encodedLen(v any) int {
	var sb strings.Builder
	enc := json.NewEncoder(&sb)
	enc.SetEscapeHTML(false)
	if enc.Encode(v) != nil {
		return 0
	}
	return sb.Len() - 1 // Encode appends a newline
}
