//go:build race

package harness

// raceEnabled: under the race detector sync.Pool drops a share of what is put back on
// purpose, so the pooling pins allow for refills there.
const raceEnabled = true

// scannerRefill is the allocations of one refill of jsonwire's scanner pool (the scanner
// and its stack), which the race detector's pool drops can cost a pinned path.
const scannerRefill = 2
