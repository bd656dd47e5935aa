// Package bench is `executor bench`, the project's performance scoreboard (issue 7): every
// performance claim is a ratio measured in one run against the released reference
// (`codex exec-server`, by default the newest supported release, 0.171.0) on the same machine.
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
// The rows are one ordered list, rows in rows.go: a name, a unit, a goal and a Measure
// function returning one sample for one side; each Measure lives in its own row_*.go.
// OursOnly rows (handshakes, handshakes_responder, idle_stream_memory,
// rendezvous_idle_memory) measure code inside the bench process and have no reference
// column. The CPU rows (stdout_cpu, relay_cpu) read the executor's utime + stime from
// /proc/PID/stat around a stream; stdout_parallel streams on several connections at once
// and checks chunks without decoding them, so the client is not the limit. Row names are
// stable: they are the keys of the JSON report.
//
// Rows reach the executors three ways: over a local WebSocket (serve / exec-server
// --listen), through our registry + rendezvous (registrycmd, started in the bench process)
// to the executor in remote mode (executor remote / exec-server --remote, relay_stream and
// oneshot_remote), or in process (noise handshakes; remote.Run and rendezvous.Hub for the
// memory rows, whose client ends live in a helper process, RunHelper, so that the bench
// process's heap holds only what is measured).
//
// # Fixtures
//
// Env holds what rows share during one Run, created on first use and released when Run
// returns: a random 1 GiB file (readblock_local), a 50,000-entry tree (walk_local), both
// under /var/tmp; a loopback HTTP server (http_stream_*, proxy_cpu); the registry (relay
// rows); a greeter, a loopback TCP server that writes one byte per connection and holds it
// (proxy_setup, proxy_idle_memory). The proxy rows (row_proxy.go) measure the proxy that
// process/start's networkProxy launches inside each executor; proxy_cpu needs curl on PATH
// (skipped without it).
//
// # Layers
//
// Above: cmd/executor/bench.go (flags → Config, prints the Report; `bench HelperArg` runs
// RunHelper). Below: the harness client, the two executor binaries run as child
// processes, and for the in-process rows noise, registry/rendezvous, registrycmd and
// cmd/executor/internal/remote. The package knows the wire only through harness, relay
// frames (the helper's stream claims) and executor/protocol.
//
// # Concurrency
//
// Run is sequential: one sample at a time, so samples never compete with each other for
// the machine. Goroutines, each with its owner: every started executor (local or remote)
// has one goroutine reading or reaping it, waited for by its stop; each harness client
// owns its read loop (closed by session.close); the HTTP server's Serve loop is stopped by
// Env.close; within one sample, handshake workers, the remote.Run of idle_stream_memory,
// the rendezvous's Serve loop and the helper's stdout scanner are started and waited for
// by that sample's Measure; the greeter's accept loop and connection routines are stopped
// by Env.close; a proxy holder's process run is waited for by its stop. The helper process uses bounded worker pools (parallel) it
// waits for. Nothing outlives Run.
//
// # Limits
//
// Sizes, counts and timeouts are in limits.go. The executors see the machine as it is:
// nothing pins CPUs, so the absolute numbers are noisy on a shared machine; the ratios
// are what rows are judged by.
package bench
