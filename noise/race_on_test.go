//go:build race

package noise_test

// raceEnabled: the race detector instruments allocations in the standard library's
// crypto, so allocation pins are checked without it only.
const raceEnabled = true
