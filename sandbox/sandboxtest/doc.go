// Package sandboxtest gives tests of the sandbox and of its users (executor/process,
// executor/fs) a Launcher for a given backend, probing the host once per backend, and
// the sandbox contexts they send.
//
// # Layers
//
// Above: _test.go files only (sandbox, executor/process, executor/fs, test/*). Below:
// package sandbox's Probe and NewLauncher, sandbox/policy's Context and internal/pathuri;
// it adds no sandbox logic of its own and never changes how a backend is chosen.
//
// # Contract
//
//   - Report(backend) is sandbox.Probe with that backend forced ("" = the automatic
//     choice), run once per test process and cached.
//   - Require(t, want) returns the report when the host selects want
//     (sandbox.BackendBubblewrap must be the automatic choice; sandbox.BackendLandlock is
//     forced). Otherwise it skips the test locally and fails it when CI=true
//     (spec/sandbox.md §7.3: in CI bubblewrap is installed, so a missing backend is a
//     failure, never silently lost coverage). The message carries the probe's log line.
//   - Launcher(t, want) is Require's report as a sandbox.Launcher with default options.
//   - Context(t, json) decodes a sandbox context; WorkspaceWrite, NestedWorkspace and
//     EnclosingOnly are the profiles the tests share, NestedRoots the issue 26 directory
//     layout (context.go).
//   - Run(t, l, req) wraps req with l and runs it to completion, at most 30 s, and returns
//     its output and exit code (128+N for signal N) (run.go).
//
// # Limits and concurrency
//
// Run caps a command at 30 s (runTimeout); no other limits. All functions are safe for
// concurrent use: one mutex guards the probe cache, and a probe runs under it, so
// parallel tests wait for the first probe instead of repeating it. It starts no
// goroutines beyond what sandbox.Probe and os/exec (Run's output copies) run and wait
// for. Only tests import it (test/deps_test.go checks the *test packages).
package sandboxtest
