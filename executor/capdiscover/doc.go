// Package capdiscover implements capabilityRoots/discoverV1
// (spec/capabilities-0.171.0.md §4): for each requested root it returns the skills
// (SKILL.md and agents/openai.yaml), the root's own plugin (manifest, MCP and apps
// configuration files) and the plugin manifests that name its namespace, as raw UTF-8
// contents, with the reference's ordering, limits, warnings and error texts.
//
// # Layers
//
// Above: the executor's method table (executor/capdiscover_methods.go), which decodes
// protocol.CapabilityRootsDiscoverParams with jsonwire's serde-compatible decoder, so
// params errors carry serde's texts (-32602 "invalid type: null, expected struct
// WireCapabilityRootsDiscoverParams", "missing field `roots`", the sequence forms, …).
// Below: executor/fs, whose walk engine (fs/walk) does the traversal and whose sandboxed
// helper runs a whole root's scan when the root carries a restricting sandbox
// (fs.RegisterHelperMethod, fs.Service.RunSandboxed): the metadata, walk and reads of
// that root then happen inside the sandbox, in one helper process, and read the files
// the sandbox's deny globs match as masked (Permission denied), exactly as fs/* does.
// A sandbox that needs no helper (disabled, full access) scans in-process.
//
// # Contract
//
// Only two request errors exist: params that do not decode (-32602) and more than
// MaxRoots roots (-32600). Everything else is per root: a root that cannot be inspected
// or is not a directory gets `error` and empty members; file problems become warnings
// in the order files are read (walk errors, the truncation warning, manifests, plugin
// files, skills). Contents are never parsed beyond the root manifest's `mcpServers` and
// `apps` members (JSON): SKILL.md front matter and openai.yaml are returned verbatim,
// valid or not, as the reference does, so no YAML or TOML parser is needed.
//
// A root's sandbox is resolved as fs/* read operations resolve theirs, for every root before
// any is scanned: a -32602 resolution error (e.g. "file system sandbox context with dynamic
// permissions requires cwd") fails the request, any other (e.g. "invalid sandbox permission
// path URI: …") becomes that root's error; windowsSandboxLevel "mxc" with a profile that
// needs a sandbox is the root error "… failed to prepare fs sandbox: failed to prepare MXC
// sandbox: native MXC is unavailable on this executor" (observed; the spec's "ignored"
// holds only for disabled and full-access profiles).
//
// Deviations and unprobed corners: a non-empty sequence given as a root's sandbox is
// refused as a type error (the reference decodes its 10 positional fields); a declared
// path whose rest is absolute (".//etc") is refused as escaping the root (unprobed); a
// helper that fails makes the root's error "failed to inspect capability root <uri>:
// <text>" (unprobed: the reference's helper does not fail that way).
//
// # Limits (limits.go)
//
// Wire: MaxRoots (128), a walk of depth MaxWalkDepth (6) over at most
// MaxWalkDirectories (2,000) directories and MaxWalkEntries (20,000) entries,
// MaxFileBytes (1 MiB) per file and MaxRootBytes (16 MiB) per root. Implementation:
// MaxConcurrentRoots (8) roots scanned at once.
//
// # Concurrency
//
// Service is stateless and safe for concurrent use. Discover scans up to
// MaxConcurrentRoots roots in goroutines it owns and waits for before it returns; each
// root's scan state belongs to one goroutine. Nothing outlives a call.
package capdiscover
