// Package fs implements the executor's filesystem methods (spec/jsonrpc.md §3.6): fs/readFile,
// fs/writeFile, fs/createDirectory, fs/getMetadata, fs/canonicalize, fs/readDirectory, fs/walk,
// fs/remove, fs/copy and the per-connection streaming handles fs/open (modes "read" and
// "replace"), fs/readBlock, fs/writeBlock, fs/close (write_block.go: fileWriteStreaming),
// and the per-connection fs/watchMissing with its fs/missingChanged notification
// (watch_missing.go: fsWatchMissing; inotify through golang.org/x/sys/unix).
//
// # Layers
//
// Above: the executor's method table, which decodes params with jsonwire.UnmarshalParams
// and binds these typed methods. Below: the host filesystem through package os and
// x/sys/unix, or a sandboxed helper process (below); package sandbox and
// sandbox/policy for that; internal/oserr for error texts. Paths arrive as
// protocol.PathURI and are converted with PathURI.Native; a foreign-OS URI fails with
// -32600 `'<uri>' is invalid on 'linux'`. The package knows nothing of sessions,
// connections or transports: per-connection state is a Handles value the caller owns.
//
// # Contract
//
// Errors: every method returns *jsonwire.Error. OS errors carry the reference's musl text
// and code mapping (internal/oserr): NotFound → -32004, PermissionDenied/InvalidInput →
// -32600, else -32603.
//
// Sandbox (spec/sandbox.md §2.9, §4): a request's sandbox context is resolved in
// sandbox.go; when the profile is restricted and not fullWrite (read-only operations
// under a fullRead profile excepted) the operation runs in a fresh helper, this binary
// re-entered through the sandbox launcher as `--codex-run-as-fs-helper` (helper.go is
// the client, helper_stage.go the helper, a point of the re-entry registry
// internal/reexec that cmd/executor's main dispatches). Without a Launcher such requests fail closed (-32602). Packages above
// fs run whole operations in the same helper through RegisterHelperMethod,
// ResolveSandbox and RunHelper (helper_ext.go; capability discovery does). A sandboxed
// fs/open is served from an in-memory snapshot the helper read inside the sandbox and
// whose length the executor verifies; one connection's snapshots total at most
// MaxSnapshotBytes (64 MiB), beyond that fs/open fails -32600 (our wording; the
// reference hands back the open descriptor and has no budget).
//
// Documented deviations from codex 0.169.0: fs/readFile honours maxBytes (the reference
// ignores it); fs/readDirectory sorts entries by name; fs/readFile of a FIFO or other
// special file fails with “path `<p>` is not a file“ instead of blocking.
//
// # Limits (limits.go)
//
// Wire, fixed by the reference: fs/open handle ids of at most MaxHandleIDLen (32) bytes,
// MaxOpenHandles (128) per connection (read and replace handles together), fs/readBlock
// len at most MaxReadBlockLen (1 MiB), fs/writeBlock chunks of 1..MaxWriteBlockLen (1 MiB)
// bytes within the signed 64-bit file offset, at most MaxWatchMissingPaths (64) paths per
// fs/watchMissing,
// fs/walk bounded by MaxWalkDepth (64), MaxWalkDirectories (10,000), MaxWalkEntries
// (50,000) and an estimated WalkResponseBudget (4 MiB); a helper response of at most
// 700 MiB; MaxSnapshotBytes (64 MiB) of sandboxed snapshots per connection.
// Implementation: 64 KiB of helper stderr kept for the failure text, a 1 GiB cap on the
// request the helper reads, and 1 s for a killed helper's I/O to drain.
//
// # Concurrency
//
// Service is stateless and safe for concurrent use. Handles (one per
// connection) is safe for concurrent use; its table is guarded by one mutex, never held
// across I/O. A helper run is a child process whose stdio copying goroutines (os/exec)
// end before the call returns. MissingWatcher (one per connection, watch_missing.go:
// fs/watchMissing) is safe for concurrent use; it is the package's only owner of
// goroutines: one routineEvents per armed inotify set, ended when the set fires, is
// replaced, or MissingWatcher.Close runs (which waits for it).
package fs
