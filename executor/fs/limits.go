package fs

// Wire limits (fixed by the reference; spec/jsonrpc.md §3.6).
const (
	// MaxHandleIDLen is the longest fs/open handleId, in bytes.
	MaxHandleIDLen = 32
	// MaxOpenHandles is the number of fs/open handles one connection may hold.
	MaxOpenHandles = 128
	// MaxReadBlockLen is the largest fs/readBlock len, in bytes (1 MiB).
	MaxReadBlockLen = 1 << 20

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

// Implementation limits (our choice).
const (
	// maxSymlinkHops bounds symlink resolution while copying, as the kernel's 40 does.
	maxSymlinkHops = 40
)
