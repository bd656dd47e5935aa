// Package test holds the repository-wide checks, as tests only: deps_test.go enforces the
// import direction of the team's STYLE.md (not in this repository: /work/shared/STYLE.md):
// which packages may import which, transitively, and that *test helper packages are
// imported only from _test.go files. Its subdirectories hold the
// cross-package suites: conformance (JSON-RPC transcripts against the reference releases),
// e2e (the built binary end to end on loopback) and interop (relay and Noise against the
// reference releases).
//
// Layers: the top; it imports internal/refbin (to find the module root) and nothing else of
// the module, and nothing imports it. Limits: none of its own; the rules are the table in
// TestDependencyDirection.
package test
