package fs

import "time"

// Wire limits (fixed by the reference; spec/jsonrpc.md §3.6).
const (
	// MaxHandleIDLen is the longest fs/open handleId, in bytes.
	MaxHandleIDLen = 32
	// MaxOpenHandles is the number of fs/open handles one connection may hold.
	MaxOpenHandles = 128
	// MaxReadBlockLen is the largest fs/readBlock len, in bytes (1 MiB).
	MaxReadBlockLen = 1 << 20
	// MaxWriteBlockLen is the largest decoded fs/writeBlock chunk, in bytes (1 MiB;
	// capabilities-0.171.0.md §8.2).
	MaxWriteBlockLen = 1 << 20

	// MaxWatchMissingPaths is the most missing paths one fs/watchMissing may watch; more
	// answer {watching:false} (capabilities-0.171.0.md §7.2; present not counted,
	// duplicates counted).
	MaxWatchMissingPaths = 64

	// MaxWalkDepth, MaxWalkDirectories and MaxWalkEntries bound fs/walk options.
	MaxWalkDepth       = 64
	MaxWalkDirectories = 10_000
	MaxWalkEntries     = 50_000
	// WalkResponseBudget is the estimated fs/walk response size, in bytes (4 MiB); an entry
	// costs its URI length + walkEntryOverhead, an error its URI + message length +
	// walkEntryOverhead.
	WalkResponseBudget = 4 << 20
	walkEntryOverhead  = 64
)

// Sandboxed helper limits (spec/sandbox.md §4, spec/jsonrpc.md §3.6).
const (
	// maxHelperStdout caps the helper's response, in bytes (spec/sandbox.md §4: 700 MiB).
	maxHelperStdout = 700 << 20
	// MaxSnapshotBytes is the total size of sandboxed fs/open snapshots one connection
	// may hold in memory, in bytes (spec/jsonrpc.md §3.6: 64 MiB). Our choice of
	// mechanism: the reference passes the open descriptor back instead and has no budget.
	MaxSnapshotBytes = 64 << 20
)

// Sandboxed helper implementation limits (our choice).
const (
	// watchEventBuffer is the inotify read buffer of an armed fs/watchMissing set, in
	// bytes: room for at least 64 events with names of NAME_MAX (255) bytes.
	watchEventBuffer = 64 * (16 + 256)
	// maxHelperStderr is how much helper stderr is kept for the failure message, in bytes.
	maxHelperStderr = 64 << 10
	// maxHelperRequest caps the request the helper reads from stdin, in bytes: a
	// fs/writeFile body of a whole JSON-RPC message plus its base64 expansion fits.
	maxHelperRequest = 1 << 30
	// helperWaitDelay bounds how long a cancelled helper's I/O may linger after the kill.
	helperWaitDelay = time.Second
)
