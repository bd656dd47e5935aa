package capdiscover

// Wire limits, fixed by the reference (spec/capabilities-0.171.0.md §4; constants READ
// from codex's capability-roots source and PROBED on codex 0.171.0 and 0.169.0 where
// noted).
const (
	// MaxRoots is the most roots one request may name; more is -32600 "capability root
	// discovery accepts at most 128 roots", checked after decoding (§4.1, PROBED: 128
	// accepted, 129 refused).
	MaxRoots = 128

	// MaxWalkDepth is the walk's depth in directory levels below the root (§4.2 step 2,
	// PROBED: a/b/c/d/e/f/SKILL.md is found, one level more is not).
	MaxWalkDepth = 6
	// MaxWalkDirectories is the most directories the walk descends into, the root
	// included (§4.2 step 2, PROBED with 2,001 subdirectories).
	MaxWalkDirectories = 2_000
	// MaxWalkEntries is the most walk entries (files, directories and per-entry errors
	// together, as fs/walk counts them) (§4.2 step 2, PROBED with 20,001 files).
	MaxWalkEntries = 20_000

	// MaxFileBytes is the largest file discovery returns, in bytes (1 MiB; §4.2 step 7,
	// PROBED: exactly 1 MiB accepted).
	MaxFileBytes = 1 << 20
	// MaxRootBytes is the most file bytes one root returns in total (16 MiB; §4.2 step
	// 7, PROBED: 18 skills of 1 MiB → 16 returned and 2 warnings).
	MaxRootBytes = 16 * MaxFileBytes
)

// Implementation limits (our choice).
const (
	// MaxConcurrentRoots is how many roots of one request are scanned at the same time;
	// the reference uses 8 too (§4.2, READ). Results keep request order either way.
	MaxConcurrentRoots = 8
)

// Layout names (§4.2, PROBED).
const (
	skillFileName    = "SKILL.md"
	skillMetadataRel = "agents/openai.yaml"
	manifestFileName = "plugin.json"
	mcpFallbackRel   = ".mcp.json"
)

// manifestDirs are the plugin manifest directories in priority order: the first that holds
// a readable plugin.json wins (§4.2 step 4, PROBED: .codex-plugin over .claude-plugin).
var manifestDirs = [...]string{".codex-plugin", ".claude-plugin", ".cursor-plugin"}

// capabilities/discoverV2 limits (spec/capabilities-0.171.0.md §5).
const (
	// MaxSkillNameChars is the longest skill name, in characters (PROBED: 64 accepted, 65
	// drops the skill); also the limit of a tool's type and transport (READ).
	MaxSkillNameChars = 64
	// MaxQualifiedNameChars is the longest "<namespace>:<name>" (READ: 64*2+1).
	MaxQualifiedNameChars = 2*MaxSkillNameChars + 1
	// MaxSidecarTextChars is the longest tool value, description, command or url in
	// agents/openai.yaml, in characters (READ).
	MaxSidecarTextChars = 1024
	// MaxCapabilities is the most plugins and skills one response carries, a plugin
	// counting 1 plus its skills (READ; PROBED: 2,048 kept, plugins first).
	MaxCapabilities = 2_048
	// MaxResponseBytes is the largest encoded response (4 MiB, READ; PROBED with 160
	// skills of 30,000-byte descriptions: 139 kept, byte for byte).
	MaxResponseBytes = 4 << 20
	// MaxWarnings is the most warnings one response carries (READ; PROBED: 71 locations
	// with problems → 64 warnings).
	MaxWarnings = 64
)

// discoverV2 location layout (PROBED).
const (
	codexHomeSkillsID   = "codex-home-skills"
	userAgentSkillsID   = "user-agent-skills"
	codexHomeSkillsRel  = "skills"
	userAgentSkillsRel  = ".agents/skills"
	pluginCacheRel      = "plugins/cache"
	localPluginVersion  = "local" // always the active version when present (READ, PROBED)
	defaultCodexHomeRel = ".codex"
)

// discoverV2 warning texts (PROBED: one per location that had any problem).
const (
	warnMetadata      = "some capability metadata could not be loaded; discovery may be incomplete"
	warnSizeLimit     = "capability discovery size limit reached"
	defaultSkillName  = "skill"
	pluginIDSeparator = "@"
)
