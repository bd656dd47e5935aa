package policy

// Wire constants, fixed by the reference (codex 0.169.0). The JSON-RPC codes that
// policy errors carry are jsonwire's: CodeInvalidParams for decode and preparation
// errors and CodeInternal for runtime-path failures (spec/sandbox.md §1.6),
// CodeInvalidRequest for fs/* sandbox path conversion failures (observed from codex
// 0.169.0 and 0.171.0).
const (
	// projectRootsGlobPrefix marks a glob relative to every workspace root
	// (spec/sandbox.md §1.4).
	projectRootsGlobPrefix = "codex-project-roots://"
)

// ProtectedMetadataNames are the names kept read-only (and uncreatable) inside every
// writable root of a policy that is not FullWrite (spec/sandbox.md §2.5, observed from
// codex 0.169.0: exactly these four).
var ProtectedMetadataNames = [...]string{".git", ".agents", ".codex", ".aws"}

// PlatformReadRoots are the roots a readable `minimal` entry adds, existing ones only
// (spec/sandbox.md §2.3).
var PlatformReadRoots = [...]string{
	"/bin", "/sbin", "/usr", "/etc", "/lib", "/lib64", "/nix/store", "/run/current-system/sw",
}

// Implementation constants (our choice).
const (
	// maxEntries bounds the entries of one restricted profile after project-root
	// materialization, so a hostile request cannot make resolution quadratic in a huge
	// input. The JSON-RPC frame limit already bounds the input; this is a second fence.
	maxEntries = 4096
	// maxGlobLen bounds one glob pattern in bytes; the matcher is O(len(pattern)·len(path)).
	maxGlobLen = 4096
)
