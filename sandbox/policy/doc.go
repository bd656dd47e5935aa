// Package policy is the pure half of the executor's Linux sandbox: the wire types of a
// FileSystemSandboxContext (spec/jsonrpc.md §6, spec/sandbox.md §1), their serde-compatible
// JSON decoding, and the resolution of a decoded context into a Policy of absolute,
// lexically clean paths with the precedence rules of spec/sandbox.md §2.
//
// # Layers
//
// Above: the executor's request handlers (executor/process, executor/fs) decode a
// Context with encoding/json (Context implements json.Unmarshaler and returns the
// reference's bare decoder texts, e.g. "missing field `windowsSandboxLevel`"), call
// Resolve, and hand the Policy to package sandbox, which enforces it. Below: the standard
// library and jsonwire, the leaf that holds the JSON-RPC error codes. This package
// performs no system calls and builds on every OS; anything that depends on the state
// of the filesystem (skip entries, platform read roots, deny-glob expansion, symlink
// detection) is done by package sandbox at launch time. It knows nothing of processes,
// helpers, bubblewrap, Landlock or seccomp.
//
// PathUri: this package does not import executor/protocol (sandbox/* imports no part of
// the executor tree). It carries its own strict file: URI parser (pathuri.go): decoding
// rejects what the reference rejects while parsing (relative references, other schemes,
// query, fragment, userinfo/port); the host-applicability check ("'<uri>' is invalid on
// 'linux'") happens in Resolve, as in the reference, where it surfaces as "failed to
// prepare process sandbox: invalid sandbox permission path: …".
//
// # Contract
//
// Precedence (spec/sandbox.md §2.2): for a restricted file system the deepest entry
// that equals or contains a path wins, ties go to the strongest of read < write < deny,
// and no match means deny. Protected metadata (ProtectedMetadataNames: .git, .agents,
// .codex, .aws) inside writable roots is read-only, and deny globs always win.
//
// Deviations, all in the stricter direction:
//   - a `special` path of kind `unknown` with `deny` access is rejected;
//   - FullWrite never treats a deny entry as shadowed by a write entry for the same path.
//
// Errors: every error returned by UnmarshalJSON or Resolve is a *Error whose Code is
// the jsonwire code to answer with (jsonwire.CodeInvalidParams for decode and
// preparation errors, almost always; jsonwire.CodeInvalidRequest for fs/* path
// conversion; jsonwire.CodeInternal for runtime-path failures), whose Message is the
// exact wire text, and whose Kind is the error.data.kind (a jsonwire.Kind… value) a
// process/start failure carries (codex 0.171.0).
//
// # Limits (limits.go)
//
// Wire: the protected metadata names and the platform read roots (PlatformReadRoots) are
// the reference's. Implementation: one restricted profile holds at most 4,096 entries
// after project-root materialization, and one glob pattern at most 4,096 bytes (the
// matcher is O(len(pattern)·len(path))), so a hostile request cannot make resolution
// quadratic in a huge input; the JSON-RPC message limit already bounds the input.
//
// # Concurrency
//
// All types are plain values; a Policy is immutable after Resolve and safe for
// concurrent use. The package keeps no state and starts no goroutines.
package policy
