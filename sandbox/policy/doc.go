// Package policy is the pure half of the executor's Linux sandbox: the wire types of a
// FileSystemSandboxContext (spec/jsonrpc.md §6, spec/sandbox.md §1), their serde-compatible
// JSON decoding, and the resolution of a decoded context into a Policy of absolute,
// lexically clean paths with the precedence rules of spec/sandbox.md §2.
//
// Layers: the executor's request handlers (executor/process, executor/fs) decode a
// Context with encoding/json (Context implements json.Unmarshaler and returns the
// reference's bare decoder texts, e.g. "missing field `windowsSandboxLevel`"), call
// Resolve, and hand the Policy to package sandbox, which enforces it. This package
// performs no system calls and builds on every OS; anything that depends on the state
// of the filesystem (skip entries, platform read roots, deny-glob expansion, symlink
// detection) is done by package sandbox at launch time.
//
// PathUri: this package does not import executor/protocol (sandbox/* may import no
// other project package). It carries its own strict file: URI parser (pathuri.go):
// decoding rejects what the reference rejects while parsing (relative references,
// other schemes, query, fragment, userinfo/port); the host-applicability check
// ("'<uri>' is invalid on 'linux'") happens in Resolve, as in the reference, where it
// surfaces as "failed to prepare process sandbox: invalid sandbox permission path: …".
//
// Precedence (spec/sandbox.md §2.2): for a restricted file system the deepest entry
// that equals or contains a path wins, ties go to the strongest of read < write < deny,
// and no match means deny. Protected metadata (.git, .agents, .codex, .aws) inside
// writable roots is read-only, and deny globs always win.
//
// Deviations, all in the stricter direction:
//   - a `special` path of kind `unknown` with `deny` access is rejected;
//   - FullWrite never treats a deny entry as shadowed by a write entry for the same path.
//
// Errors: every error returned by UnmarshalJSON or Resolve is a *Error whose Code is
// the JSON-RPC code to answer with (almost always -32602) and whose Message is the
// exact wire text.
//
// Concurrency: all types are plain values; a Policy is immutable after Resolve and
// safe for concurrent use.
package policy
