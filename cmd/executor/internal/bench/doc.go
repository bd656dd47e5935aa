// Package bench is `executor bench`, the project's performance scoreboard (issue 7): every
// performance claim is a ratio measured in one run against the released reference
// (`codex exec-server` 0.169.0) on the same machine.
//
// # What it does
//
// Run starts both executors itself, on loopback with fresh CODEX_HOME and TMPDIR under
// /var/tmp, drives them through the harness package (a real WebSocket client), and for each
// selected row: one warm-up sample per side (discarded), then Runs samples alternating
// ours, reference, ours, … so that drift on a shared machine hits both sides alike. Each
// row reports min/median/max per side, the ratio of the medians (ours / reference) and
// whether its goal is met. Unmet goals are results, not failures; a run that errors or
// loses data is a failure.
//
// # Rows
//
// Each row is one file (row_*.go) that registers a Row in init: a name, a unit, a goal and
// a Measure function returning one sample for one side. Rows whose Measure is nil are
// listed as "not yet available" with no numbers. Row names are stable: they are the keys
// of the JSON report.
//
// # Layers
//
// Above: cmd/executor/bench.go (flags → Config, prints the Report). Below: the harness
// client and the two executor binaries run as child processes. The package knows the wire
// only through harness and executor/protocol.
//
// # Concurrency
//
// Run is sequential: one sample at a time, so samples never compete with each other for
// the machine. Goroutines: each started executor has one stdout-scanner goroutine owned by
// its instance and waited for by instance.stop; each harness client owns its read loop
// (closed by session.close). Nothing outlives Run.
//
// # Limits
//
// Sizes, counts and timeouts are in limits.go. The executors see the machine as it is:
// nothing pins CPUs, so the absolute numbers are noisy on a shared machine; the ratios
// are what rows are judged by.
package bench
