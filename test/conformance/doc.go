// Package conformance replays scripted JSON-RPC exchanges against every released reference
// (`codex exec-server` 0.171.0 and 0.169.0: refbin.Versions) and against `executor serve`,
// and requires the transcripts to be equal after masking values that differ by nature
// (UUIDs, temporary paths, peer ports, environment details we deliberately do not send).
// Ours behaves as the newest release; where the releases differ, a scenario's per-release
// section or one systematic rule says so (releases_test.go).
//
// Scenarios live in testdata/scenarios/*.json; see scenario_test.go for the format.
// `go test ./test/conformance -run TestReleases_Differences -v -args -refdiff` replays them
// against the reference releases only and reports where those disagree.
package conformance
