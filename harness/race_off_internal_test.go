//go:build !race

package harness

const raceEnabled = false

// scannerRefill is the allocations of one refill of jsonwire's scanner pool (the scanner
// and its stack), which the race detector's pool drops can cost a pinned path.
const scannerRefill = 0
