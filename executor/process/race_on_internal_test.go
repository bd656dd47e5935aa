//go:build race

package process

// raceEnabled: under the race detector sync.Pool drops items at random, so allocation
// pins on pooled paths are checked without it only.
const raceEnabled = true
