// Package shellsnap implements process/start's shellSnapshot (capability
// shellSnapshotV2; spec/capabilities-0.171.0.md §3): the user's shell state — exported
// variables, functions, aliases, options — captured once per session and key by
// running the user's startup files, then restored into later `<shell> -lc <script>`
// commands without running those files again.
//
// Layers: executor/process decodes the member (Decode), checks it after its own argv
// and cwd checks (Request.Plan), runs captures through its spawn and sandbox path (a
// CaptureFunc built from CaptureArgv and Parse) and spawns the Rewrite'd command. This
// package knows nothing of JSON-RPC connections, sandboxes or process tables; it owns
// the capture scripts, the capture output format, the per-session Cache and the
// command rewrite.
//
// Contract (reference behaviour, codex 0.171.0):
//   - Applies only when argv is [shell.path, "-lc", script, extra…] (exact string
//     compare); otherwise the command runs as requested and nothing is captured.
//     shell.name must be bash, zsh or sh; scopeId 1..MaxScopeBytes bytes.
//   - A capture runs the prepared command (same sandbox, cwd, environment, arg0) with
//     the script replaced, stdin /dev/null, stderr discarded, stdout parsed; it emulates
//     login (the shell's -l) and interactive startup (the rc file is sourced).
//   - Environment of the final command: prepared environment, then the snapshot's
//     exports (filtered by envPolicy with inherit forced to all), then the request env.
//   - Any capture failure (exit status, timeout, oversize, unparsable output) runs the
//     command unchanged; no error reaches the client.
//
// Limits (limits.go): MaxEntries keys per session (LRU), CaptureTimeout per capture,
// MaxCaptureOutput of stdout, MaxStateBytes of state plus environment, RetryBackoff
// between attempts, MaxFailedAttempts per key.
//
// Concurrency: Cache is safe for concurrent use, starts no goroutine (a capture runs in
// the requesting goroutine, shared by concurrent starts of its key) and Close cancels
// running captures. One lock (Cache.mu), never held across a capture.
package shellsnap
