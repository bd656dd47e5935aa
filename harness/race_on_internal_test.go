//go:build race

package harness

// raceEnabled: under the race detector sync.Pool drops a share of what is put back on
// purpose, so the pooling pins allow for refills there.
const raceEnabled = true
