package main

import (
	"log/slog"
	"math"
	"os"
	"runtime/debug"
)

// remoteMemoryBase is what `executor remote` may use besides retained output, in bytes of
// Go-managed memory: the runtime, the relay's and the JSON-RPC layer's buffers, and the
// headroom the garbage collector gets above a full backlog while that backlog is encoded
// and sent (measured in the EXECUTOR_SOAK run, docs/reliability.md §4). The binary's own
// mapped pages (about 10 MiB of RSS) come on top, which keeps RSS under the bound plus
// 64 MiB.
const remoteMemoryBase = 40 << 20

// setRemoteMemoryLimit gives the Go runtime a soft memory limit of one process's
// unacknowledged-output bound plus remoteMemoryBase, unless GOMEMLIMIT is set (the runtime
// has applied it; "off" disables any limit). Without it the collector lets the heap grow to
// twice the live data (GOGC=100): a 64 MiB backlog replayed after a reconnect took the
// executor to 139 MiB RSS. With it the collector runs more often once the heap nears the
// limit; retained output is pointer-free, so those collections are cheap. It is a soft
// limit: an executor holding several detached processes at their bound needs more, and the
// collector then works harder (at most about half the CPU, the runtime's cap) — set
// GOMEMLIMIT above the expected backlog for such hosts. It returns the limit in effect.
func setRemoteMemoryLimit(maxUnacked int, log *slog.Logger) int64 {
	if _, set := os.LookupEnv("GOMEMLIMIT"); set {
		return debug.SetMemoryLimit(-1)
	}
	if int64(maxUnacked) > math.MaxInt64-remoteMemoryBase {
		return debug.SetMemoryLimit(-1) // a bound this large means "no bound"
	}
	limit := int64(maxUnacked) + remoteMemoryBase
	debug.SetMemoryLimit(limit)
	log.Debug("soft memory limit set", "bytes", limit)
	return limit
}
