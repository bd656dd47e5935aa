// Package refbin locates the released reference binaries (`codex`, npm @openai/codex) and
// this repository's executor binary for tests that run both.
//
// The executor is wire-compatible with every release in Versions (newest first) and
// behaves as the newest; every reference-comparing test runs against each of them, in a
// subtest named by the version (ForEachRelease).
//
// Lookup, once per test binary: every path in $EXECUTOR_REFERENCE_BINS (a list separated
// like PATH) and $EXECUTOR_REFERENCE_BIN is asked for its `--version`; a release still
// missing after that is installed by `REFERENCE_CODEX_VERSION=V scripts/install-reference.sh`
// (cache first, npm when needed). When CI=true a missing release fails the test that needs
// it; elsewhere that test (or its release subtest) is skipped with the reason, because
// developers may lack npm.
//
// It is also the one launcher of test processes, ours or a release's (launch.go): Launch
// starts a command, keeps its output (1 MiB), waits for the stdout line that says where it
// listens (a ws:// or http:// URL by default, any regexp otherwise) and, at cleanup, stops
// it with SIGTERM and then SIGKILL (or SIGKILL at once with Kill), logging its output when
// the test failed; StartProc is the same for a server shared by a whole test binary.
// Executor builds ./cmd/executor once per test binary (Main removes it), MainWithExecutor
// before the tests of a TestMain that keeps its path in a variable; Command and
// RemoteCommand give ours and a release the same minimal environment. Every goroutine a
// Proc starts ends by Stop.
//
// Outcomes of release subtests are appended to the file named by $EXECUTOR_TEST_SUMMARY
// (see Record), so that scripts/test.sh can print a line per package and release.
//
// Layers: used only by _test.go files (interop, e2e, conformance, differential tests in
// cmd/executor); it imports nothing of this project, and nothing but tests imports it. Below
// it: os/exec, the reference's npm package and scripts/install-reference.sh.
//
// Limits: Versions (refbin.go) is the supported-release table, newest first; adding a
// release there makes every ForEachRelease test run against it.
package refbin
