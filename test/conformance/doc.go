// Package conformance replays scripted JSON-RPC exchanges against every released reference
// (`codex exec-server` 0.171.0 and 0.169.0: refbin.Versions) and against `executor serve`,
// and requires the transcripts to be equal after masking values that differ by nature
// (UUIDs, temporary paths, peer ports, environment details we deliberately do not send).
// Ours behaves as the newest release; where the releases differ, a scenario's per-release
// section or one systematic rule says so (releases_test.go).
//
// # Layers
//
// Above: CI (scripts/test.sh) and a developer changing wire behaviour. Below: two real
// binaries over real loopback WebSockets — the reference releases found through
// internal/refbin (EXECUTOR_REFERENCE_BINS) and our binary, built once by TestMain — plus
// a loopback HTTP fixture for http/request scenarios (${HTTP}). The tests import no
// server internals beyond executor.ExecutorVersion: they see only bytes on the wire, so
// any change in what we send shows up here, whichever package caused it.
//
// # Contract
//
//   - Scenarios live in testdata/scenarios/*.json; scenario_test.go documents the format
//     (send, recv, recvSet, recvUntil, expectClosed, reconnect, use, sleep, masks and
//     per-release rules). A scenario file is the transcript contract: changing what a
//     scenario expects is a wire change and needs the reference's agreement.
//   - A difference between the releases is never absorbed silently: it is a systematic
//     rule (one table, applied to every scenario against that release) or a per-release
//     "skip" or "mask" with a reason; skips are counted and listed in the summary.
//   - executorVersion is checked, then masked: the reference must report its own release
//     and ours executor.ExecutorVersion, which must be the newest.
//   - `go test ./test/conformance -run TestReleases_Differences -v -args -refdiff` replays
//     the scenarios against the reference releases only and reports where they disagree.
//
// # Limits
//
// Every receive waits at most recvTimeout (5 s, the reference tests' own bound per event);
// a server must print its URL within 10 s; one scenario runs under a 60 s context.
// Scenario servers run in their own temporary directory under /var/tmp/executor-tests,
// removed afterwards.
//
// # Concurrency
//
// Scenarios run one after another; each starts its own server processes and kills and
// waits for them in t.Cleanup. The only goroutine per server reads its stdout until EOF,
// which the kill guarantees. Without the reference binaries the tests skip locally and
// fail in CI (internal/refbin).
package conformance
