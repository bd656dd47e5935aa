package main

import (
	"log/slog"
	"math"
	"os"
	"runtime/debug"
)

// memoryBase is what `executor serve` or `executor remote` may use besides retained
// output, in bytes of Go-managed memory: the runtime, the relay's and the JSON-RPC layer's
// buffers, and the headroom the garbage collector gets above a full backlog while that
// backlog is encoded and sent (measured in the EXECUTOR_SOAK run, docs/reliability.md §4).
// The binary's own mapped pages (about 10 MiB of RSS) come on top, which keeps RSS under
// the budget plus 64 MiB.
const memoryBase = 40 << 20

// setMemoryLimit gives the Go runtime a soft memory limit of the executor's budget of
// unacknowledged output (--max-unacked-total-bytes: every outputAck process of every
// session together) plus memoryBase, unless GOMEMLIMIT is set (the runtime has applied it;
// "off" disables any limit). Without it the collector lets the heap grow to twice the live
// data (GOGC=100): a 64 MiB backlog replayed after a reconnect took the executor to 139 MiB
// RSS. With it the collector runs more often once the heap nears the limit; retained
// output is pointer-free, so those collections are cheap. It is a soft limit, but the
// budget bounds what it has to hold: released-mode processes (1 MiB each), many
// connections or large fs/http transfers can still need more, and the collector then
// works harder (at most about half the CPU, the runtime's cap) — set GOMEMLIMIT higher on
// such hosts. It returns the limit in effect.
func setMemoryLimit(budget int, log *slog.Logger) int64 {
	if _, set := os.LookupEnv("GOMEMLIMIT"); set {
		return debug.SetMemoryLimit(-1)
	}
	if int64(budget) > math.MaxInt64-memoryBase {
		return debug.SetMemoryLimit(-1) // a bound this large means "no bound"
	}
	limit := int64(budget) + memoryBase
	debug.SetMemoryLimit(limit)
	log.Debug("soft memory limit set", "bytes", limit)
	return limit
}
