// Package capdiscover implements capabilityRoots/discoverV1
// (spec/capabilities-0.171.0.md §4) and capabilities/discoverV2 (§5). discoverV1: for each
// requested root it returns the skills
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
// # discoverV2 (v2.go, frontmatter.go, sidecar.go, plugins_cache.go, yamlnode.go)
//
// discoverV2 reuses discoverV1 whole: each location ($CODEX_HOME/skills,
// $HOME/.agents/skills, and the active version directory of every plugin under
// $CODEX_HOME/plugins/cache/<marketplace>/<plugin>/) is scanned as one V1 root, with the
// same walk, manifest priority, byte limits, V1 warnings and, under a restricting
// sandbox, the same sandboxed helper (a second helper method,
// "capabilities/scanLocation", which treats a hidden location as absent). The V1 result
// is then interpreted: SKILL.md front matter (name, description,
// metadata.short-description), agents/openai.yaml (policy, dependencies), the plugin
// manifest (name, interface.displayName), and namespaces ("<manifest name>:<skill>") from
// the V1 namespace manifests. Any problem in a location becomes exactly one warning, "some
// capability metadata could not be loaded; discovery may be incomplete". The rules are in
// each file's header; every one was observed on codex 0.171.0 and 0.169.0 and is pinned by
// test/conformance/testdata/scenarios/discoverv2_*.json. The cwd param is decoded and not
// used (the reference returns no repository skills).
//
// YAML: go.yaml.in/yaml/v3, the maintained continuation of gopkg.in/yaml.v3 (already in
// the module graph through OpenTelemetry and testify), used only as a parser to nodes.
// serde_yaml's acceptance rules (any scalar as a string's text, only true/True/TRUE and
// false/False/FALSE as bools, a repeated known field refused, unknown keys ignored, one
// document) are applied by hand in yamlnode.go; go-yaml's own decoding rules (yes/on as
// bools, duplicate detection on every key) would differ. Known gaps, unprobed: YAML 1.1
// versus 1.2 corner cases where the two parsers disagree on validity (tabs, odd
// indentation, merge keys).
//
// No cache. The reference keeps an inventory built at start and refreshed by filesystem
// watchers, which miss trees created after start at times and locations whose parent did
// not exist at start (§5). This package scans on every call instead: a call sees exactly
// the files of that moment, which is at least as fresh as the reference in every case
// the reference gets right, and removes the watcher goroutines, their lifetimes and their
// failure modes. The cost is one walk per location per call, bounded by the V1 limits
// (a few milliseconds for the trees of the conformance scenarios).
//
// Deviations and unprobed corners of discoverV2: remotePluginId is always null (the
// reference reads it from marketplace state this executor does not have, unprobed);
// system skills ("system-skills") are not a location of their own ($CODEX_HOME/skills/
// .system is walked as part of codex-home-skills, as observed); the response budget
// (MaxCapabilities, MaxResponseBytes, MaxWarnings, "capability discovery size limit
// reached") was READ and then probed at each limit, but not every order of cuts; a
// non-empty sequence as the sandbox is a type error; a version set mixing semver and
// other names is ordered by a comparison that can be intransitive, where the
// reference's sort may pick differently.
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
// Service is stateless and safe for concurrent use. Discover and DiscoverV2 scan up to
// MaxConcurrentRoots roots (locations) in goroutines they own and wait for before they
// return; each root's scan state belongs to one goroutine. Nothing outlives a call.
package capdiscover
