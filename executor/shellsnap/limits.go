package shellsnap

import "time"

// Wire constants: fixed by the reference (spec/capabilities-0.171.0.md §3; codex
// core/src/shell_snapshot.rs, read in the stored index, and probes of codex 0.171.0).
const (
	// MaxScopeBytes bounds ShellSnapshotRequest.scopeId, in bytes (§3.1, PROBED: 256
	// accepted, 257 rejected).
	MaxScopeBytes = 256

	// MaxEntries is the per-session cache size in entries; inserting one more evicts the
	// least recently used (§3.3, PROBED with 17 scopes).
	MaxEntries = 16

	// CaptureTimeout bounds one capture, startup files included (§3.2, PROBED: a
	// .bashrc sleeping 12 s made process/start take 10.04 s).
	CaptureTimeout = 10 * time.Second

	// captureChunk and captureChunks give the capture's stdout budget: 8 × 512 KiB
	// = 4 MiB (§3.2, READ).
	captureChunk  = 512 << 10
	captureChunks = 8
	// MaxCaptureOutput is the capture's stdout budget in bytes; more fails the capture.
	MaxCaptureOutput = captureChunks * captureChunk

	// MaxStateBytes bounds the rendered state plus the exported environment, in bytes
	// (§3.2, READ); more fails the capture.
	MaxStateBytes = 512 << 10

	// RetryBackoff is the wait after a failed capture before the next attempt; starts
	// inside it run unsnapshotted (§3.3, PROBED).
	RetryBackoff = time.Second

	// MaxFailedAttempts failed captures leave the key unsnapshotted until it is evicted
	// (§3.3, PROBED).
	MaxFailedAttempts = 3

	// EnvChunkBytes bounds one __CODEX_SHELL_SNAPSHOT_STATE_<n> variable of the
	// environment transport, in bytes (§3.4, READ: 60 KiB).
	EnvChunkBytes = 60 << 10
)

// Implementation constants (our choice).
const (
	// StateFD is the descriptor the file transport passes the rendered state on. The
	// reference uses whatever number its open file got (15 and 18 were seen); only
	// $BASH_EXECUTION_STRING shows it.
	StateFD = 15

	// envChunkPrefix names the environment transport's variables (§3.4, PROBED name).
	envChunkPrefix = "__CODEX_SHELL_SNAPSHOT_STATE_"

	// captureMarker separates whatever the startup files print from the capture's
	// sections. NUL cannot occur in a shell variable, so neither state text nor an
	// environment entry can forge it.
	captureMarker = "\x00__CODEX_SHELL_SNAPSHOT_V1__\x00"
)
