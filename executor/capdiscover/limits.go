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
