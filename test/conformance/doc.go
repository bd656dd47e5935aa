// Package conformance replays scripted JSON-RPC exchanges against the released reference
// (`codex exec-server` 0.169.0) and against `executor serve`, and requires the two
// transcripts to be equal after masking values that differ by nature (UUIDs, temporary
// paths, peer ports, environment details we deliberately do not send).
//
// Scenarios live in testdata/scenarios/*.json; see scenario_test.go for the format.
package conformance
